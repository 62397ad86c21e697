package io.meshpilot.networking.authz;

import com.google.protobuf.Duration;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.GrpcService;
import io.envoyproxy.envoy.config.core.v3.HeaderValue;
import io.envoyproxy.envoy.config.core.v3.HttpUri;
import io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.AuthorizationRequest;
import io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.AuthorizationResponse;
import io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.BufferSettings;
import io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.ExtAuthz;
import io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.HttpService;
import io.envoyproxy.envoy.type.matcher.v3.ListStringMatcher;
import io.envoyproxy.envoy.type.matcher.v3.MetadataMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.v3.HttpStatus;
import io.envoyproxy.envoy.type.v3.StatusCode;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig.ExtensionProvider;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * The ext_authz filters of meshConfig's {@code envoyExtAuthzHttp} and {@code envoyExtAuthzGrpc}
 * extension providers (istiod's builder/extauthz.go): the provider's service must be in the
 * registry ({@code host} when one namespace has it, else {@code namespace/host}), its port in
 * range, {@code statusOnError} an HTTP status Envoy knows, {@code pathPrefix} start with "/"
 * and header lists hold no lone "*". A provider with any error is kept with its errors, so the
 * policies using it deny what they would have sent to it.
 */
final class ExtAuthzProviders {
    static final String MATCH_PREFIX = "istio-ext-authz";
    static final String EXT_AUTHZ_SHADOW_PREFIX = "istio_ext_authz_";
    static final String SHADOW_EFFECTIVE_POLICY_ID = "shadow_effective_policy_id";
    static final String HTTP_RBAC = "envoy.filters.http.rbac";
    static final String NETWORK_RBAC = "envoy.filters.network.rbac";

    /** One provider's filters (tcp is null for HTTP providers), or why it cannot be used. */
    record Provider(ExtAuthz http, io.envoyproxy.envoy.extensions.filters.network.ext_authz.v3.ExtAuthz tcp,
                    List<String> errors) {
        Provider {
            errors = List.copyOf(errors);
        }
    }

    private final Map<String, Provider> providers;

    private ExtAuthzProviders(Map<String, Provider> providers) {
        this.providers = providers;
    }

    static ExtAuthzProviders of(PushContext push) {
        Map<String, Provider> out = new HashMap<>();
        List<ExtensionProvider> list = push.mesh().getExtensionProvidersList();
        for (int i = 0; i < list.size(); i++) {
            ExtensionProvider p = list.get(i);
            List<String> errors = new ArrayList<>();
            if (p.getName().isEmpty()) {
                errors.add("extension provider name must not be empty, found empty at index: " + i);
            } else if (out.containsKey(p.getName())) {
                errors.add("extension provider name must be unique, found duplicate: " + p.getName());
            }
            Provider built;
            switch (p.getProviderCase()) {
                case ENVOY_EXT_AUTHZ_HTTP -> built = http(push, p.getEnvoyExtAuthzHttp(), errors);
                case ENVOY_EXT_AUTHZ_GRPC -> built = grpc(push, p.getEnvoyExtAuthzGrpc(), errors);
                default -> {
                    continue;
                }
            }
            if (!errors.isEmpty()) {
                errors.replaceAll(e -> "failed to parse extension provider \"" + p.getName() + "\": " + e);
            }
            out.put(p.getName(), new Provider(built == null ? null : built.http(), built == null ? null : built.tcp(),
                    errors));
        }
        return new ExtAuthzProviders(out);
    }

    /** The provider named {@code name}; throws naming the problem when it is unknown or broken. */
    Provider get(String name) throws UnsupportedValue {
        Provider p = providers.get(name);
        if (p == null) {
            throw new UnsupportedValue("available providers are " + new TreeSet<>(providers.keySet())
                    + " but found \"" + name + "\"");
        }
        if (!p.errors().isEmpty()) {
            throw new UnsupportedValue("found errors in provider " + name + ": " + String.join("; ", p.errors()));
        }
        return p;
    }

    private record Target(String hostname, String cluster) {
    }

    private static Target lookup(PushContext push, String service, int port, List<String> errors) {
        if (service.isEmpty()) {
            errors.add("service must not be empty");
            return null;
        }
        String[] parts = service.split("/", -1);
        if (parts.length == 2) {
            Service s = push.services().get(parts[1]);
            if (s != null && s.namespace().equals(parts[0])) {
                return new Target(s.hostname(), ClusterNames.outbound(port, "", s.hostname()));
            }
        } else {
            Service s = push.services().get(service);
            if (s != null) {
                return new Target(s.hostname(), ClusterNames.outbound(port, "", s.hostname()));
            }
        }
        errors.add("could not find service " + service + " in Istio service registry");
        return null;
    }

    private static int port(int port, List<String> errors) {
        if (port < 1 || port > 65535) {
            errors.add("port must be in the range [1, 65535], found: " + Integer.toUnsignedString(port));
            return 0;
        }
        return port;
    }

    private static HttpStatus statusOnError(String status, List<String> errors) {
        if (status.isEmpty()) {
            return null;
        }
        try {
            int code = Integer.parseInt(status);
            StatusCode sc = StatusCode.forNumber(code);
            if (sc != null) {
                return HttpStatus.newBuilder().setCode(sc).build();
            }
            errors.add("unsupported statusOnError " + status);
        } catch (NumberFormatException e) {
            errors.add("invalid statusOnError \"" + status + "\": not a number");
        }
        return null;
    }

    private static Provider http(PushContext push, ExtensionProvider.EnvoyExternalAuthorizationHttpProvider c,
                                 List<String> errors) {
        int port = port(c.getPort(), errors);
        Target target = lookup(push, c.getService(), port, errors);
        HttpStatus status = statusOnError(c.getStatusOnError(), errors);
        if (!c.getPathPrefix().isEmpty() && !c.getPathPrefix().startsWith("/")) {
            errors.add("pathPrefix must begin with `/`, found: \"" + c.getPathPrefix() + "\"");
        }
        checkWildcard("IncludeRequestHeadersInCheck", c.getIncludeRequestHeadersInCheckList(), errors);
        checkWildcard("IncludeHeadersInCheck", c.getIncludeHeadersInCheckList(), errors);
        checkWildcard("HeadersToDownstreamOnDeny", c.getHeadersToDownstreamOnDenyList(), errors);
        checkWildcard("HeadersToDownstreamOnAllow", c.getHeadersToDownstreamOnAllowList(), errors);
        checkWildcard("HeadersToUpstreamOnAllow", c.getHeadersToUpstreamOnAllowList(), errors);
        if (!errors.isEmpty()) {
            return null;
        }
        HttpService.Builder service = HttpService.newBuilder().setPathPrefix(c.getPathPrefix())
                .setServerUri(HttpUri.newBuilder().setTimeout(timeout(c.hasTimeout(), c.getTimeout()))
                        .setUri("http://" + target.hostname()).setCluster(target.cluster()));
        ListStringMatcher allowed = headers(c.getIncludeRequestHeadersInCheckList());
        if (allowed == null) {
            allowed = headers(c.getIncludeHeadersInCheckList());
        }
        if (c.getIncludeAdditionalHeadersInCheckCount() > 0) {
            AuthorizationRequest.Builder req = AuthorizationRequest.newBuilder();
            new TreeMap<>(c.getIncludeAdditionalHeadersInCheckMap()).forEach((k, v) ->
                    req.addHeadersToAdd(HeaderValue.newBuilder().setKey(k).setValue(v)));
            service.setAuthorizationRequest(req);
        }
        if (c.getHeadersToUpstreamOnAllowCount() > 0 || c.getHeadersToDownstreamOnDenyCount() > 0
                || c.getHeadersToDownstreamOnAllowCount() > 0) {
            AuthorizationResponse.Builder resp = AuthorizationResponse.newBuilder();
            ListStringMatcher up = headers(c.getHeadersToUpstreamOnAllowList());
            ListStringMatcher deny = headers(c.getHeadersToDownstreamOnDenyList());
            ListStringMatcher allow = headers(c.getHeadersToDownstreamOnAllowList());
            if (up != null) {
                resp.setAllowedUpstreamHeaders(up);
            }
            if (deny != null) {
                resp.setAllowedClientHeaders(deny);
            }
            if (allow != null) {
                resp.setAllowedClientHeadersOnSuccess(allow);
            }
            service.setAuthorizationResponse(resp);
        }
        ExtAuthz.Builder http = ExtAuthz.newBuilder().setFailureModeAllow(c.getFailOpen())
                .setTransportApiVersion(ApiVersion.V3).setHttpService(service)
                .setFilterEnabledMetadata(filterEnabled(HTTP_RBAC, MATCH_PREFIX));
        if (status != null) {
            http.setStatusOnError(status);
        }
        if (c.hasIncludeRequestBodyInCheck()) {
            http.setWithRequestBody(body(c.getIncludeRequestBodyInCheck()));
        }
        if (allowed != null) {
            http.setAllowedHeaders(allowed);
        }
        return new Provider(http.build(), null, List.of());
    }

    private static Provider grpc(PushContext push, ExtensionProvider.EnvoyExternalAuthorizationGrpcProvider c,
                                 List<String> errors) {
        int port = port(c.getPort(), errors);
        Target target = lookup(push, c.getService(), port, errors);
        HttpStatus status = statusOnError(c.getStatusOnError(), errors);
        if (!errors.isEmpty()) {
            return null;
        }
        GrpcService grpc = GrpcService.newBuilder().setEnvoyGrpc(GrpcService.EnvoyGrpc.newBuilder()
                        .setClusterName(target.cluster()).setAuthority(target.hostname()))
                .setTimeout(timeout(c.hasTimeout(), c.getTimeout())).build();
        ExtAuthz.Builder http = ExtAuthz.newBuilder().setFailureModeAllow(c.getFailOpen()).setGrpcService(grpc)
                .setFilterEnabledMetadata(filterEnabled(HTTP_RBAC, MATCH_PREFIX))
                .setTransportApiVersion(ApiVersion.V3);
        if (status != null) {
            http.setStatusOnError(status);
        }
        if (c.hasIncludeRequestBodyInCheck()) {
            http.setWithRequestBody(body(c.getIncludeRequestBodyInCheck()));
        }
        var tcp = io.envoyproxy.envoy.extensions.filters.network.ext_authz.v3.ExtAuthz.newBuilder()
                .setStatPrefix("tcp.").setFailureModeAllow(c.getFailOpen()).setTransportApiVersion(ApiVersion.V3)
                .setGrpcService(grpc).setFilterEnabledMetadata(filterEnabled(NETWORK_RBAC, MATCH_PREFIX)).build();
        return new Provider(http.build(), tcp, List.of());
    }

    private static void checkWildcard(String field, List<String> values, List<String> errors) {
        if (values.contains("*")) {
            errors.add("a single wildcard (\"*\") is not supported, change it to either prefix or suffix match: "
                    + field);
        }
    }

    private static Duration timeout(boolean set, Duration d) {
        return set ? d : Duration.newBuilder().setSeconds(600).build(); // istiod's default: 600s
    }

    private static BufferSettings body(ExtensionProvider.EnvoyExternalAuthorizationRequestBody b) {
        return BufferSettings.newBuilder().setMaxRequestBytes(b.getMaxRequestBytes())
                .setAllowPartialMessage(b.getAllowPartialMessage()).setPackAsBytes(b.getPackAsBytes()).build();
    }

    /** Header names matched without case: "*x" a suffix, "x*" a prefix, else exact. */
    private static ListStringMatcher headers(List<String> headers) {
        if (headers.isEmpty()) {
            return null;
        }
        ListStringMatcher.Builder out = ListStringMatcher.newBuilder();
        for (String h : headers) {
            StringMatcher.Builder m = StringMatcher.newBuilder().setIgnoreCase(true);
            if (h.startsWith("*")) {
                m.setSuffix(h.substring(1));
            } else if (h.endsWith("*")) {
                m.setPrefix(h.substring(0, h.length() - 1));
            } else {
                m.setExact(h);
            }
            out.addPatterns(m);
        }
        return out.build();
    }

    /**
     * Runs ext_authz only when the RBAC filter before it recorded a matching CUSTOM policy:
     * its shadow effective policy id starts with {@code prefix}.
     */
    static MetadataMatcher filterEnabled(String rbacFilter, String prefix) {
        return MetadataMatcher.newBuilder().setFilter(rbacFilter)
                .addPath(MetadataMatcher.PathSegment.newBuilder()
                        .setKey(EXT_AUTHZ_SHADOW_PREFIX + SHADOW_EFFECTIVE_POLICY_ID))
                .setValue(AuthzMatchers.stringValue(AuthzMatchers.prefix(prefix, false))).build();
    }
}
