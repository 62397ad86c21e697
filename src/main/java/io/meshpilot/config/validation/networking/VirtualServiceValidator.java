package io.meshpilot.config.validation.networking;

import com.google.protobuf.Message;
import io.meshpilot.api.networking.v1alpha3.CorsPolicy;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.HTTPDirectResponse;
import io.meshpilot.api.networking.v1alpha3.HTTPFaultInjection;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPMirrorPolicy;
import io.meshpilot.api.networking.v1alpha3.HTTPRedirect;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.HTTPRewrite;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.L4MatchAttributes;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSMatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;

/**
 * istiod's VirtualService rules: hosts (wildcard domains, IPs or short names; "*" alone only
 * for gateways other than mesh; no duplicates), gateway references, delegate rules, HTTP routes
 * (route/redirect/directResponse/delegate conflicts, matches, header manipulation, CORS, fault
 * injection, mirrors, redirect, direct response, retries, rewrite, destinations and weights,
 * timeout), TLS routes (SNI hosts within the VirtualService's hosts) and TCP routes, exportTo;
 * unreachable or ineffective rules are warnings.
 */
public final class VirtualServiceValidator implements Validator {
    static final String MESH = "mesh";
    private static final Set<String> RETRY_ON = Set.of("5xx", "gateway-error", "reset", "reset-before-request",
            "connect-failure", "retriable-4xx", "refused-stream", "retriable-status-codes", "retriable-headers",
            "envoy-ratelimited", "http3-post-connect-failure", "cancelled", "deadline-exceeded", "internal",
            "resource-exhausted", "unavailable");
    /** HTTP status codes Go's net/http knows (a retryOn entry may be one). */
    private static final Set<Integer> HTTP_STATUS = Set.of(100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207,
            208, 226, 300, 301, 302, 303, 304, 305, 307, 308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411,
            412, 413, 414, 415, 416, 417, 418, 421, 422, 423, 424, 425, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504,
            505, 506, 507, 508, 510, 511);
    private static final Set<String> CORS_METHODS = Set.of("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "CONNECT",
            "OPTIONS", "TRACE", "*");
    private static final Set<String> GRPC_STATUS = Set.of("OK", "CANCELLED", "UNKNOWN", "INVALID_ARGUMENT",
            "DEADLINE_EXCEEDED", "NOT_FOUND", "ALREADY_EXISTS", "PERMISSION_DENIED", "RESOURCE_EXHAUSTED",
            "FAILED_PRECONDITION", "ABORTED", "OUT_OF_RANGE", "UNIMPLEMENTED", "INTERNAL", "UNAVAILABLE", "DATA_LOSS",
            "UNAUTHENTICATED");
    private static final int KB = 1024;
    private static final int MB = 1024 * KB;

    private enum RouteType { INDEPENDENT, ROOT, DELEGATE }

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        VirtualService vs = (VirtualService) config.spec();
        Validation spec = v.at("spec");
        boolean delegate = vs.getHostsCount() == 0;
        if (delegate) {
            // no hosts: a delegate VirtualService, only reachable through a root's HTTP route
            if (vs.getGatewaysCount() > 0) {
                spec.at("gateways").error("a delegate VirtualService (no hosts) cannot have gateways");
            }
            if (vs.getTlsCount() > 0) {
                spec.at("tls").error("a delegate VirtualService (no hosts) cannot have TLS routes");
            }
            if (vs.getTcpCount() > 0) {
                spec.at("tcp").error("a delegate VirtualService (no hosts) cannot have TCP routes");
            }
        }
        boolean toGateway = false;
        if (vs.getGatewaysCount() > 0) {
            gatewayNames(spec.at("gateways"), vs.getGatewaysList());
            toGateway = !vs.getGatewaysList().contains(MESH);
        }
        boolean toMesh = !toGateway;
        if (!toGateway) {
            for (int i = 0; i < vs.getHttpCount(); i++) {
                for (int j = 0; j < vs.getHttp(i).getMatchCount(); j++) {
                    HTTPMatchRequest m = vs.getHttp(i).getMatch(j);
                    Validation at = spec.at("http", i).at("match", j);
                    claimRoutingOnGatewayOnly(at.at("headers"), m.getHeadersMap().keySet());
                    claimRoutingOnGatewayOnly(at.at("withoutHeaders"), m.getWithoutHeadersMap().keySet());
                }
            }
        }
        hosts(spec.at("hosts"), vs, toGateway, toMesh);
        if (vs.getHttpCount() == 0 && vs.getTcpCount() == 0 && vs.getTlsCount() == 0) {
            spec.at("http").error("a VirtualService must have http, tcp or tls routes");
        }
        for (int i = 0; i < vs.getHttpCount(); i++) {
            httpRoute(spec.at("http", i), vs.getHttp(i), delegate);
        }
        for (int i = 0; i < vs.getTlsCount(); i++) {
            tlsRoute(spec.at("tls", i), vs.getTls(i), vs, toGateway);
        }
        for (int i = 0; i < vs.getTcpCount(); i++) {
            tcpRoute(spec.at("tcp", i), vs.getTcp(i));
        }
        NetworkingChecks.exportTo(spec.at("exportTo"), config.namespace(), vs.getExportToList(), false, false);
        unreachable(spec.at("http"), vs.getHttpList().stream().map(HTTPRoute::getMatchList).toList());
        unreachable(spec.at("tcp"), vs.getTcpList().stream().map(TCPRoute::getMatchList).toList());
        unreachable(spec.at("tls"), vs.getTlsList().stream().map(TLSRoute::getMatchList).toList());
    }

    private static void claimRoutingOnGatewayOnly(Validation v, Set<String> keys) {
        for (String key : keys) {
            if (NetworkingChecks.isJwtClaim(key)) {
                v.at("[" + key + "]").error("JWT claim based routing (" + key + ") is only supported on gateways "
                        + "(this VirtualService applies to the mesh)");
            }
        }
    }

    private static void hosts(Validation v, VirtualService vs, boolean toGateway, boolean toMesh) {
        boolean sni = vs.getTlsList().stream().anyMatch(t -> t.getMatchList().stream().anyMatch(m -> m.getSniHostsCount() > 0));
        boolean allValid = true;
        for (int i = 0; i < vs.getHostsCount(); i++) {
            String host = vs.getHosts(i);
            String problem = toGateway ? gatewayBoundHostProblem(sni, host) : NetworkingChecks.wildcardDomainProblem(host);
            if (problem != null) {
                if (!NetworkingChecks.isIp(host)) {
                    v.at("[" + i + "]").error(problem);
                    allValid = false;
                }
            } else if (toMesh && host.equals("*")) {
                v.at("[" + i + "]").error("wildcard host \"*\" is not allowed for VirtualServices bound to the mesh "
                        + "(name a gateway in gateways)");
                allValid = false;
            }
        }
        if (allValid) {
            for (int i = 0; i < vs.getHostsCount(); i++) {
                for (int j = i + 1; j < vs.getHostsCount(); j++) {
                    if (HostNames.matches(vs.getHosts(i), vs.getHosts(j))) {
                        v.at("[" + j + "]").error("duplicate hosts in VirtualService: \"" + vs.getHosts(i) + "\" and \""
                                + vs.getHosts(j) + "\" overlap");
                    }
                }
            }
        }
    }

    /**
     * A host of a VirtualService bound to gateways: a wildcard domain, or with SNI routes an
     * auto-passthrough name "outbound_.PORT_._.HOST".
     */
    static String gatewayBoundHostProblem(boolean sni, String host) {
        if (host.isEmpty() || host.length() > 255) {
            return NetworkingChecks.wildcardDomainProblem(host);
        }
        if (sni && host.startsWith("outbound_")) {
            String[] parts = host.split("_", -1);
            if (parts.length < 4) {
                return "domain name \"" + host + "\" is invalid: expected the form outbound_.<PORT>_._.<HOSTNAME>";
            }
            String port = trimDots(parts[1]);
            String hostname = trimDots(parts[3]);
            if (!port.matches(".*[0-9].*")) {
                return "domain name \"" + host + "\" is invalid: port \"" + port
                        + "\" (expected the form outbound_.<PORT>_._.<HOSTNAME>)";
            }
            if (!hostname.matches(".*[a-zA-Z].*")) {
                return "domain name \"" + host + "\" is invalid: hostname \"" + hostname
                        + "\" (expected the form outbound_.<PORT>_._.<HOSTNAME>)";
            }
            return null;
        }
        return NetworkingChecks.wildcardDomainProblem(host);
    }

    private static String trimDots(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && s.charAt(b) == '.') {
            b++;
        }
        while (e > b && s.charAt(e - 1) == '.') {
            e--;
        }
        return s.substring(b, e);
    }

    /** Gateway references: "mesh", "[namespace/]name" (a dotted name is the legacy name.namespace form). */
    static void gatewayNames(Validation v, List<String> names) {
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            Validation at = v.at("[" + i + "]");
            int slash = name.indexOf('/');
            if (slash < 0) {
                if (name.contains(".")) {
                    String[] parts = name.split("\\.");
                    at.warn("legacy gateway name format \"" + name + "\"; prefer <namespace>/<name>: \""
                            + (parts.length > 1 ? parts[1] : "") + "/" + parts[0] + "\"");
                }
                NetworkingChecks.fqdn(at, name);
                continue;
            }
            String ns = name.substring(0, slash);
            String gw = name.substring(slash + 1);
            if (ns.isEmpty() || gw.isEmpty()) {
                at.error("gateway \"" + name + "\": namespace and name must not be empty");
                continue;
            }
            if (!NetworkingChecks.isDnsLabel(ns)) {
                at.error("gateway \"" + name + "\": invalid namespace \"" + ns + "\" (DNS-1123 label)");
            }
            if (!NetworkingChecks.isDnsLabel(gw)) {
                at.error("gateway \"" + name + "\": invalid gateway name \"" + gw + "\" (DNS-1123 label)");
            }
        }
    }

    // ---- HTTP ---------------------------------------------------------------------------------

    private static void httpRoute(Validation v, HTTPRoute r, boolean inDelegate) {
        RouteType type = inDelegate ? RouteType.DELEGATE : r.hasDelegate() ? RouteType.ROOT : RouteType.INDEPENDENT;
        conflicts(v, r, type);
        if (type == RouteType.ROOT) {
            if (r.getDelegate().getName().isEmpty()) {
                v.at("delegate").at("name").warn("delegate has no name; no VirtualService can be delegated to");
            } else if (!r.getDelegate().getName().matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")) {
                v.at("delegate").at("name").warn("delegate name \"" + r.getDelegate().getName()
                        + "\" is not a valid object name; no VirtualService can match it");
            }
        }
        for (int j = 0; j < r.getMatchCount(); j++) {
            match(v.at("match", j), r.getMatch(j));
        }
        if (r.hasHeaders()) {
            headers(v.at("headers"), r.getHeaders());
        }
        if (r.hasCorsPolicy()) {
            cors(v.at("corsPolicy"), r.getCorsPolicy());
        }
        if (r.hasFault()) {
            fault(v.at("fault"), r.getFault());
        }
        if (r.hasMirrorPercent()) {
            int value = r.getMirrorPercent().getValue();
            if (Integer.compareUnsigned(value, 100) > 0) {
                v.at("mirrorPercent").error("mirrorPercent must be at most 100 (is " + Integer.toUnsignedString(value) + ")");
            }
            v.at("mirrorPercent").warn("mirrorPercent is deprecated; use mirrorPercentage");
        }
        if (r.hasMirrorPercentage()) {
            mirrorPercentage(v.at("mirrorPercentage"), r.getMirrorPercentage().getValue());
        }
        if (r.hasMirror()) {
            destination(v.at("mirror"), r.getMirror());
        }
        for (int k = 0; k < r.getMirrorsCount(); k++) {
            HTTPMirrorPolicy m = r.getMirrors(k);
            Validation at = v.at("mirrors", k);
            if (!m.hasDestination()) {
                at.at("destination").error("destination is required for a mirror");
                continue;
            }
            destination(at.at("destination"), m.getDestination());
            if (m.hasPercentage()) {
                mirrorPercentage(at.at("percentage"), m.getPercentage().getValue());
            }
        }
        if (r.hasRedirect()) {
            redirect(v.at("redirect"), r.getRedirect());
        }
        if (r.hasDirectResponse()) {
            directResponse(v.at("directResponse"), r.getDirectResponse());
        }
        if (r.hasRetries()) {
            retries(v.at("retries"), r.getRetries());
        }
        if (r.hasRewrite()) {
            rewrite(v.at("rewrite"), r.getRewrite());
        }
        authorityRewrite(v, r);
        httpDestinations(v.at("route"), r.getRouteList());
        if (r.hasTimeout()) {
            NetworkingChecks.duration(v.at("timeout"), r.getTimeout());
        }
    }

    private static void conflicts(Validation v, HTTPRoute r, RouteType type) {
        if (type == RouteType.ROOT) {
            // a delegating route only names the delegate
            if (r.hasRedirect()) {
                v.at("redirect").error("an HTTP route with a delegate cannot have a redirect");
            }
            if (r.getRouteCount() > 0) {
                v.at("route").error("an HTTP route with a delegate cannot have a route");
            }
            return;
        }
        if (type == RouteType.DELEGATE && r.hasDelegate()) {
            v.at("delegate").error("an HTTP route of a delegate VirtualService cannot delegate again");
        }
        if (r.hasRedirect()) {
            if (r.getRouteCount() > 0) {
                v.at("redirect").error("an HTTP route cannot have both route and redirect");
            }
            if (r.hasFault()) {
                v.at("fault").error("an HTTP route cannot have both fault and redirect");
            }
            if (r.hasRewrite()) {
                v.at("rewrite").error("an HTTP route cannot have both rewrite and redirect");
            }
            if (r.hasDirectResponse()) {
                v.at("directResponse").error("an HTTP route cannot have both directResponse and redirect");
            }
        } else if (r.hasDirectResponse()) {
            if (r.getRouteCount() > 0) {
                v.at("directResponse").error("an HTTP route cannot have both route and directResponse");
            }
            if (r.hasFault()) {
                v.at("fault").error("an HTTP route cannot have both fault and directResponse");
            }
            if (r.hasRewrite()) {
                v.at("rewrite").error("an HTTP route cannot have both rewrite and directResponse");
            }
        } else if (r.getRouteCount() == 0) {
            v.at("route").error("an HTTP route must have a route, redirect, directResponse or delegate");
        }
        if (r.hasMirror() && r.getMirrorsCount() > 0) {
            v.at("mirrors").error("an HTTP route cannot have both mirror and mirrors");
        }
    }

    private static void match(Validation v, HTTPMatchRequest m) {
        for (Map.Entry<String, StringMatch> e : m.getHeadersMap().entrySet()) {
            Validation at = v.at("headers").at("[" + e.getKey() + "]");
            NetworkingChecks.headerName(at, e.getKey(), true);
            stringMatch(at, e.getValue());
        }
        for (Map.Entry<String, StringMatch> e : m.getWithoutHeadersMap().entrySet()) {
            Validation at = v.at("withoutHeaders").at("[" + e.getKey() + "]");
            NetworkingChecks.headerName(at, e.getKey(), true);
            // regex "*" is not RE2: it means "header present"
            if (!(e.getValue().getMatchTypeCase() == StringMatch.MatchTypeCase.REGEX && e.getValue().getRegex().equals("*"))) {
                stringMatch(at, e.getValue());
            }
        }
        // an empty uri prefix is allowed (Envoy's route prefix); scheme/method/authority prefixes are not
        if (m.hasUri()) {
            regexOnly(v.at("uri"), m.getUri());
        }
        if (m.hasScheme()) {
            stringMatch(v.at("scheme"), m.getScheme());
        }
        if (m.hasMethod()) {
            stringMatch(v.at("method"), m.getMethod());
        }
        if (m.hasAuthority()) {
            stringMatch(v.at("authority"), m.getAuthority());
        }
        for (Map.Entry<String, StringMatch> e : m.getQueryParamsMap().entrySet()) {
            stringMatch(v.at("queryParams").at("[" + e.getKey() + "]"), e.getValue());
        }
        if (m.getPort() != 0) {
            NetworkingChecks.port(v.at("port"), Integer.toUnsignedLong(m.getPort()));
        }
        NetworkingChecks.labels(v.at("sourceLabels"), m.getSourceLabelsMap());
        gatewayNames(v.at("gateways"), m.getGatewaysList());
        if (!m.getSourceNamespace().isEmpty() && !NetworkingChecks.isDnsLabel(m.getSourceNamespace())) {
            v.at("sourceNamespace").error("sourceNamespace \"" + m.getSourceNamespace() + "\" is not a valid namespace");
        }
    }

    /** istiod's validateStringMatch: a prefix must not be empty; a regex must be non-empty RE2. */
    static void stringMatch(Validation v, StringMatch sm) {
        if (sm.getMatchTypeCase() == StringMatch.MatchTypeCase.PREFIX && sm.getPrefix().isEmpty()) {
            v.at("prefix").error("prefix match must not be empty");
            return;
        }
        regexOnly(v, sm);
    }

    private static void regexOnly(Validation v, StringMatch sm) {
        if (sm.getMatchTypeCase() == StringMatch.MatchTypeCase.REGEX) {
            NetworkingChecks.regex(v.at("regex"), sm.getRegex());
        }
    }

    private static void headers(Validation v, Headers h) {
        // request header names have extra restrictions (pseudo-headers, Host) that response names do not
        if (h.hasRequest()) {
            headerOperations(v.at("request"), h.getRequest(), NetworkingChecks::requestHeaderOperationName);
        }
        if (h.hasResponse()) {
            headerOperations(v.at("response"), h.getResponse(), NetworkingChecks::headerOperationName);
        }
    }

    private static void headerOperations(Validation v, Headers.HeaderOperations ops,
                                         BiConsumer<Validation, String> nameCheck) {
        for (var op : List.of(Map.entry("add", ops.getAddMap()), Map.entry("set", ops.getSetMap()))) {
            for (Map.Entry<String, String> e : op.getValue().entrySet()) {
                Validation at = v.at(op.getKey()).at("[" + e.getKey() + "]");
                nameCheck.accept(at, e.getKey());
                NetworkingChecks.headerValue(at, e.getValue());
            }
        }
        for (int i = 0; i < ops.getRemoveCount(); i++) {
            NetworkingChecks.headerOperationName(v.at("remove", i), ops.getRemove(i));
        }
    }

    /** The authority may be rewritten in one place only: rewrite.authority or a Host/:authority header. */
    private static void authorityRewrite(Validation v, HTTPRoute r) {
        String current = r.getRewrite().getAuthority();
        Headers.HeaderOperations req = r.getHeaders().getRequest();
        for (String op : List.of("set", "add")) {
            Map<String, String> m = op.equals("set") ? req.getSetMap() : req.getAddMap();
            for (Map.Entry<String, String> e : m.entrySet()) {
                if (!NetworkingChecks.isAuthorityHeader(e.getKey())) {
                    continue;
                }
                if (!current.isEmpty()) {
                    v.at("headers").at("request").at(op).at("[" + e.getKey() + "]").error("the authority is already "
                            + "rewritten to \"" + current + "\"; it cannot also be set to \"" + e.getValue() + "\"");
                    return;
                }
                current = e.getValue();
            }
        }
    }

    private static void cors(Validation v, CorsPolicy c) {
        for (int i = 0; i < c.getAllowOriginsCount(); i++) {
            StringMatch o = c.getAllowOrigins(i);
            Validation at = v.at("allowOrigins", i);
            String value = switch (o.getMatchTypeCase()) {
                case EXACT -> o.getExact();
                case PREFIX -> o.getPrefix();
                case REGEX -> o.getRegex();
                default -> "";
            };
            if (value.isEmpty()) {
                at.error("an allowOrigins entry must be a non-empty exact, prefix or regex match");
            } else {
                regexOnly(at, o);
            }
        }
        if (c.getAllowOriginCount() > 0) {
            v.at("allowOrigin").warn("allowOrigin is deprecated; use allowOrigins");
        }
        for (int i = 0; i < c.getAllowMethodsCount(); i++) {
            if (!CORS_METHODS.contains(c.getAllowMethods(i))) {
                v.at("allowMethods", i).error("\"" + c.getAllowMethods(i) + "\" is not a supported HTTP method");
            }
        }
        corsHeaderNames(v.at("allowHeaders"), c.getAllowHeadersList());
        corsHeaderNames(v.at("exposeHeaders"), c.getExposeHeadersList());
        if (c.hasMaxAge()) {
            if (NetworkingChecks.duration(v.at("maxAge"), c.getMaxAge()) && c.getMaxAge().getNanos() > 0) {
                v.at("maxAge").error("maxAge is only accurate to seconds");
            }
        }
    }

    private static void corsHeaderNames(Validation v, List<String> names) {
        for (int i = 0; i < names.size(); i++) {
            String n = names.get(i);
            if (n.isEmpty()) {
                v.at("[" + i + "]").error("header name must not be empty");
            } else if (!n.equals("*") && !NetworkingChecks.isHeaderName(n)) {
                v.at("[" + i + "]").error("\"" + n + "\" is not a valid header name");
            }
        }
    }

    private static void fault(Validation v, HTTPFaultInjection f) {
        if (!f.hasAbort() && !f.hasDelay()) {
            v.error("fault injection must have an abort and/or a delay");
        }
        if (f.hasAbort()) {
            HTTPFaultInjection.Abort a = f.getAbort();
            Validation at = v.at("abort");
            if (a.hasPercentage()) {
                NetworkingChecks.fractionalPercent(at.at("percentage").at("value"), a.getPercentage().getValue());
            }
            switch (a.getErrorTypeCase()) {
                case GRPC_STATUS -> {
                    if (!GRPC_STATUS.contains(a.getGrpcStatus())) {
                        at.at("grpcStatus").error("gRPC status \"" + a.getGrpcStatus() + "\" is not supported "
                                + "(use a code name such as NOT_FOUND or UNAVAILABLE)");
                    }
                }
                case HTTP2_ERROR -> at.at("http2Error").error("HTTP/2 abort fault injection is not supported");
                case HTTP_STATUS -> httpStatus(at.at("httpStatus"), a.getHttpStatus());
                default -> at.warn("abort is configured without an error type (httpStatus or grpcStatus)");
            }
        }
        if (f.hasDelay()) {
            HTTPFaultInjection.Delay d = f.getDelay();
            Validation at = v.at("delay");
            if (d.hasPercentage()) {
                NetworkingChecks.fractionalPercent(at.at("percentage").at("value"), d.getPercentage().getValue());
            }
            if (d.getPercent() != 0) {
                NetworkingChecks.percent(at.at("percent"), d.getPercent());
                at.at("percent").warn("percent is deprecated; use percentage");
            }
            switch (d.getHttpDelayTypeCase()) {
                case FIXED_DELAY -> NetworkingChecks.duration(at.at("fixedDelay"), d.getFixedDelay());
                case EXPONENTIAL_DELAY -> {
                    NetworkingChecks.duration(at.at("exponentialDelay"), d.getExponentialDelay());
                    at.at("exponentialDelay").error("exponentialDelay is not supported; use fixedDelay");
                }
                default -> at.at("fixedDelay").warn("delay has no fixedDelay; no delay is injected");
            }
        }
    }

    /** An HTTP status for an abort or direct response: 200..599. */
    private static void httpStatus(Validation v, long status) {
        if (status < 200 || status > 599) {
            v.error("HTTP status " + status + " is not in the range 200..599");
        }
    }

    private static void mirrorPercentage(Validation v, double value) {
        if (value > 100) {
            v.error("mirror percentage must be at most 100 (is " + value + ")");
        }
        if (value < 0) {
            v.error("mirror percentage must not be negative (is " + value + ")");
        }
    }

    private static void redirect(Validation v, HTTPRedirect r) {
        if (r.getUri().isEmpty() && r.getAuthority().isEmpty() && r.getScheme().isEmpty()
                && r.getRedirectPortCase() == HTTPRedirect.RedirectPortCase.REDIRECTPORT_NOT_SET) {
            v.error("redirect must set uri, authority, scheme or port");
        }
        if (r.getRedirectCode() != 0 && (r.getRedirectCode() < 300 || r.getRedirectCode() > 399)) {
            v.at("redirectCode").error(Integer.toUnsignedString(r.getRedirectCode())
                    + " is not a valid redirect code (must be 3xx)");
        }
        if (!r.getScheme().isEmpty() && !r.getScheme().equals("http") && !r.getScheme().equals("https")) {
            v.at("scheme").error("redirect scheme must be \"http\" or \"https\"");
        }
        if (r.getRedirectPortCase() == HTTPRedirect.RedirectPortCase.PORT && r.getPort() != 0) {
            NetworkingChecks.port(v.at("port"), Integer.toUnsignedLong(r.getPort()));
        }
    }

    private static void directResponse(Validation v, HTTPDirectResponse d) {
        if (d.hasBody()) {
            long size = switch (d.getBody().getSpecifierCase()) {
                case STRING -> d.getBody().getString().getBytes(StandardCharsets.UTF_8).length;
                case BYTES -> d.getBody().getBytes().size();
                default -> 0;
            };
            if (size > MB) {
                v.at("body").error("direct response body must be smaller than 1MB (is " + size + " bytes)");
            } else if (size > 100 * KB) {
                v.at("body").warn("large direct response bodies may impact control plane performance");
            }
        }
        httpStatus(v.at("status"), Integer.toUnsignedLong(d.getStatus()));
    }

    private static void retries(Validation v, HTTPRetry r) {
        if (r.getAttempts() < 0) {
            v.at("attempts").error("attempts cannot be negative");
        }
        if (r.getAttempts() == 0 && (r.hasPerTryTimeout() || !r.getRetryOn().isEmpty() || r.hasRetryRemoteLocalities())) {
            v.at("attempts").error("retry settings are configured but attempts is 0 (retries disabled)");
        }
        if (r.hasPerTryTimeout()) {
            NetworkingChecks.duration(v.at("perTryTimeout"), r.getPerTryTimeout());
        }
        if (!r.getRetryOn().isEmpty()) {
            for (String policy : r.getRetryOn().split(",", -1)) {
                if (!RETRY_ON.contains(policy) && !isHttpStatus(policy)) {
                    v.at("retryOn").error("\"" + policy + "\" is not a valid retryOn policy");
                }
            }
        }
        if (r.hasBackoff()) {
            NetworkingChecks.duration(v.at("backoff"), r.getBackoff());
        }
    }

    private static boolean isHttpStatus(String s) {
        try {
            return HTTP_STATUS.contains(Integer.parseInt(s));
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private static void rewrite(Validation v, HTTPRewrite r) {
        if (!r.getUri().isEmpty() && r.hasUriRegexRewrite()) {
            v.at("uriRegexRewrite").error("rewrite can have only one of uri and uriRegexRewrite");
            return;
        }
        if (r.getUri().isEmpty() && !r.hasUriRegexRewrite() && r.getAuthority().isEmpty()) {
            v.error("rewrite must set uri, uriRegexRewrite or authority");
            return;
        }
        if (r.hasUriRegexRewrite()) {
            Validation at = v.at("uriRegexRewrite");
            if (r.getUriRegexRewrite().getMatch().isEmpty() || r.getUriRegexRewrite().getRewrite().isEmpty()) {
                at.error("uriRegexRewrite requires both match and rewrite");
                return;
            }
            NetworkingChecks.regex(at.at("match"), r.getUriRegexRewrite().getMatch());
        }
    }

    private static void httpDestinations(Validation v, List<HTTPRouteDestination> route) {
        long total = 0;
        for (int k = 0; k < route.size(); k++) {
            HTTPRouteDestination d = route.get(k);
            Validation at = v.at("[" + k + "]");
            if (!d.hasDestination()) {
                at.at("destination").error("destination is required");
            } else {
                destination(at.at("destination"), d.getDestination());
            }
            if (d.hasHeaders()) {
                headers(at.at("headers"), d.getHeaders());
            }
            total += weight(at.at("weight"), d.getWeight());
        }
        if (route.size() > 1 && total == 0) {
            v.error("total destination weight is 0");
        }
    }

    private static void l4Destinations(Validation v, List<RouteDestination> route) {
        long total = 0;
        for (int k = 0; k < route.size(); k++) {
            RouteDestination d = route.get(k);
            Validation at = v.at("[" + k + "]");
            if (!d.hasDestination()) {
                at.at("destination").error("destination is required");
            } else {
                destination(at.at("destination"), d.getDestination());
            }
            total += weight(at.at("weight"), d.getWeight());
        }
        if (route.size() > 1 && total == 0) {
            v.error("total destination weight is 0");
        }
    }

    private static int weight(Validation v, int weight) {
        if (weight < 0) {
            v.error("weight " + weight + " must not be negative");
            return 0;
        }
        return weight;
    }

    /** istiod's validateDestination (also used for mirrors and a Sidecar's egress proxy). */
    static void destination(Validation v, Destination d) {
        if (d.getHost().equals("*")) {
            v.at("host").error("destination host cannot be \"*\"");
        } else {
            NetworkingChecks.wildcardDomain(v.at("host"), d.getHost());
        }
        if (!d.getSubset().isEmpty() && !NetworkingChecks.isDnsLabel(d.getSubset())) {
            v.at("subset").error("subset name \"" + d.getSubset() + "\" is not a DNS-1123 label");
        }
        if (d.hasPort()) {
            NetworkingChecks.port(v.at("port").at("number"), Integer.toUnsignedLong(d.getPort().getNumber()));
        }
    }

    // ---- TLS and TCP --------------------------------------------------------------------------

    private static void tlsRoute(Validation v, TLSRoute r, VirtualService vs, boolean toGateway) {
        if (r.getMatchCount() == 0) {
            v.at("match").error("a TLS route must have at least one match (sniHosts)");
        }
        for (int j = 0; j < r.getMatchCount(); j++) {
            TLSMatchAttributes m = r.getMatch(j);
            Validation at = v.at("match", j);
            if (m.getSniHostsCount() == 0) {
                at.at("sniHosts").error("a TLS match must have at least one SNI host");
            }
            for (int k = 0; k < m.getSniHostsCount(); k++) {
                sniHost(at.at("sniHosts", k), m.getSniHosts(k), vs, toGateway);
            }
            l4Match(at, m.getDestinationSubnetsList(), m.getPort(), m.getSourceLabelsMap(), m.getGatewaysList());
        }
        if (r.getRouteCount() == 0) {
            v.at("route").error("a TLS route must have a route");
        }
        l4Destinations(v.at("route"), r.getRouteList());
    }

    private static void sniHost(Validation v, String sni, VirtualService vs, boolean toGateway) {
        String problem = toGateway ? gatewayBoundHostProblem(true, sni) : NetworkingChecks.wildcardDomainProblem(sni);
        if (problem != null) {
            if (NetworkingChecks.isIp(sni)) {
                v.warn("an IP address (\"" + sni + "\") as SNI goes against the SNI spec; most clients do not send it");
            } else {
                v.error(problem);
            }
            return;
        }
        for (String host : vs.getHostsList()) {
            if (HostNames.subsetOf(sni, host)) {
                return;
            }
        }
        v.error("SNI host \"" + sni + "\" is not within any of the VirtualService hosts " + vs.getHostsList());
    }

    private static void tcpRoute(Validation v, TCPRoute r) {
        for (int j = 0; j < r.getMatchCount(); j++) {
            L4MatchAttributes m = r.getMatch(j);
            Validation at = v.at("match", j);
            l4Match(at, m.getDestinationSubnetsList(), m.getPort(), m.getSourceLabelsMap(), m.getGatewaysList());
        }
        if (r.getRouteCount() == 0) {
            v.at("route").error("a TCP route must have a route");
        }
        l4Destinations(v.at("route"), r.getRouteList());
    }

    /** What TLS and TCP matches share: destination subnets, port, source labels, gateways. */
    private static void l4Match(Validation at, List<String> subnets, int port, Map<String, String> sourceLabels,
                                List<String> gateways) {
        for (int k = 0; k < subnets.size(); k++) {
            NetworkingChecks.ipOrSubnet(at.at("destinationSubnets", k), subnets.get(k));
        }
        if (port != 0) {
            NetworkingChecks.port(at.at("port"), Integer.toUnsignedLong(port));
        }
        NetworkingChecks.labels(at.at("sourceLabels"), sourceLabels);
        gatewayNames(at.at("gateways"), gateways);
    }

    // ---- reachability (warnings) ----------------------------------------------------------------

    /**
     * istiod's unreachable-rule analysis: only the last rule may have no matches, a rule after
     * it is never used, and a match equal to an earlier one (names aside) is ineffective.
     */
    private static void unreachable(Validation v, List<? extends List<? extends Message>> routes) {
        Map<Message, Integer> seen = new HashMap<>();
        int catchAll = -1;
        for (int i = 0; i < routes.size(); i++) {
            List<? extends Message> matches = routes.get(i);
            Validation at = v.at("[" + i + "]");
            if (matches.isEmpty()) {
                if (catchAll >= 0) {
                    at.warn("rule not used: only the last rule can have no matches (rule " + catchAll + " has none)");
                }
                catchAll = i;
                continue;
            }
            int duplicates = 0;
            for (int j = 0; j < matches.size(); j++) {
                if (catchAll >= 0) {
                    at.warn("rule not used: rule " + catchAll + " before it has no matches");
                    break;
                }
                Message key = matches.get(j) instanceof HTTPMatchRequest m ? m.toBuilder().clearName().build() : matches.get(j);
                Integer first = seen.putIfAbsent(key, i);
                if (first != null) {
                    at.at("match", j).warn("match not used: the same match is in rule " + first);
                    duplicates++;
                }
            }
            if (duplicates == matches.size()) {
                at.warn("rule not used: all its matches are used by earlier rules");
            }
        }
    }
}
