package io.meshpilot.networking.grpcgen;

import com.google.protobuf.Any;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.RetryPolicy;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteAction;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.envoyproxy.envoy.extensions.filters.common.fault.v3.FaultDelay;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.FaultAbort;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.v3.FractionalPercent;
import io.meshpilot.api.networking.v1alpha3.HTTPFaultInjection;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.ClusterNames;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * RDS for proxyless gRPC: the route configuration of one {@code host:port}, from the first
 * VirtualService routing that host (istiod's gRPC generator): uri exact/prefix/regex and
 * header matches, one route per match that applies to the port (a match naming another
 * {@code port} is left out), weighted clusters with subsets, timeout, retries,
 * fault abort and delay. Without a VirtualService, one default route to the service's cluster.
 */
public final class GrpcRouteBuilder {
    private GrpcRouteBuilder() {
    }

    public static RouteConfiguration build(String name, ProxyScope scope, PushContext push) {
        HostPort hp = HostPort.parse(name, scope.namespace(), push.domainSuffix());
        if (hp == null || push.service(hp.host(), scope).flatMap(s -> s.port(hp.port())).isEmpty()) {
            return null;
        }
        // the name as the client wrote it, plus the resolved host with and without the port;
        // domains must be unique (Envoy rejects repeats) and the name often is host:port already
        VirtualHost.Builder vh = VirtualHost.newBuilder().setName(name)
                .addAllDomains(new LinkedHashSet<>(List.of(name, hp.host(), hp.host() + ":" + hp.port())));
        List<Config> vss = push.meshHttpVirtualServices(hp.host(), scope);
        if (!vss.isEmpty()) {
            Config vsConfig = vss.get(0);
            for (HTTPRoute r : ((VirtualService) vsConfig.spec()).getHttpList()) {
                if (r.getRouteCount() == 0) {
                    continue; // redirects and direct responses are not for gRPC clients
                }
                List<HTTPMatchRequest> matches = r.getMatchCount() == 0 ? List.of(HTTPMatchRequest.getDefaultInstance())
                        : r.getMatchList();
                for (HTTPMatchRequest m : matches) {
                    // a match for another port of the service (a GAMMA route's parentRef port) is not this one's
                    if (m.getPort() == 0 || m.getPort() == hp.port()) {
                        vh.addRoutes(route(r, m, vsConfig.namespace(), hp, push));
                    }
                }
            }
        }
        // a catch-all last: istiod's default route to the service itself
        vh.addRoutes(Route.newBuilder().setName("default")
                .setMatch(RouteMatch.newBuilder().setPrefix(""))
                .setRoute(RouteAction.newBuilder().setCluster(ClusterNames.outbound(hp.port(), "", hp.host()))));
        return RouteConfiguration.newBuilder().setName(name).addVirtualHosts(vh).build();
    }

    private static Route route(HTTPRoute r, HTTPMatchRequest m, String vsNamespace, HostPort hp, PushContext push) {
        RouteMatch.Builder match = RouteMatch.newBuilder();
        StringMatch uri = m.getUri();
        switch (uri.getMatchTypeCase()) {
            case EXACT -> match.setPath(uri.getExact());
            case PREFIX -> match.setPrefix(uri.getPrefix());
            case REGEX -> match.setSafeRegex(RegexMatcher.newBuilder().setRegex(uri.getRegex()));
            default -> match.setPrefix("");
        }
        for (Map.Entry<String, StringMatch> h : m.getHeadersMap().entrySet()) {
            match.addHeaders(headerMatcher(h.getKey(), h.getValue()));
        }
        RouteAction.Builder action = RouteAction.newBuilder();
        if (r.getRouteCount() == 1) {
            action.setCluster(cluster(r.getRoute(0), vsNamespace, hp, push));
        } else {
            WeightedCluster.Builder wc = WeightedCluster.newBuilder();
            for (HTTPRouteDestination d : r.getRouteList()) {
                wc.addClusters(WeightedCluster.ClusterWeight.newBuilder().setName(cluster(d, vsNamespace, hp, push))
                        .setWeight(UInt32Value.of(d.getWeight())));
            }
            action.setWeightedClusters(wc);
        }
        if (r.hasTimeout()) {
            action.setMaxStreamDuration(RouteAction.MaxStreamDuration.newBuilder().setMaxStreamDuration(r.getTimeout()));
        }
        if (r.hasRetries() && r.getRetries().getAttempts() > 0) {
            RetryPolicy.Builder retry = RetryPolicy.newBuilder()
                    .setNumRetries(UInt32Value.of(r.getRetries().getAttempts()))
                    .setRetryOn(r.getRetries().getRetryOn().isEmpty() ? "unavailable" : r.getRetries().getRetryOn());
            if (r.getRetries().hasPerTryTimeout()) {
                retry.setPerTryTimeout(r.getRetries().getPerTryTimeout());
            }
            action.setRetryPolicy(retry);
        }
        Route.Builder route = Route.newBuilder().setName(r.getName()).setMatch(match).setRoute(action);
        if (r.hasFault()) {
            route.putTypedPerFilterConfig(GrpcListenerBuilder.FAULT_FILTER, Any.pack(fault(r.getFault())));
        }
        return route.build();
    }

    private static String cluster(HTTPRouteDestination d, String vsNamespace, HostPort hp, PushContext push) {
        String host = PushContext.resolve(d.getDestination().getHost(), vsNamespace, push.domainSuffix());
        int port = d.getDestination().hasPort() ? d.getDestination().getPort().getNumber()
                : push.service(host).map(Service::ports).filter(p -> p.size() == 1).map(p -> p.get(0).port())
                .orElse(hp.port());
        return ClusterNames.outbound(port, d.getDestination().getSubset(), host);
    }

    /**
     * Istio's header match in HeaderMatcher's original fields ({@code exact_match},
     * {@code prefix_match}, {@code safe_regex_match}, {@code present_match}), never
     * {@code string_match}: gRPC stacks read string_match only since gRFC A63 (2023: grpc-java
     * 9845, C-core grpc/grpc 32993, grpc-go 6313), and an older one NACKs the whole route
     * configuration (C-core 1.51: "Invalid route header matcher specified"), while every stack,
     * new or old, still reads the original fields. istiod sends string_match (its sidecar route
     * translation), so these clients fail against it; here one form serves all, no version
     * sniffing. An empty match, or the regex "*", means "present", as in istiod.
     */
    static HeaderMatcher headerMatcher(String name, StringMatch m) {
        HeaderMatcher.Builder h = HeaderMatcher.newBuilder().setName(name);
        switch (m.getMatchTypeCase()) {
            case EXACT -> h.setExactMatch(m.getExact());
            case PREFIX -> {
                if (m.getPrefix().isEmpty()) {
                    h.setPresentMatch(true); // prefix_match must not be empty
                } else {
                    h.setPrefixMatch(m.getPrefix());
                }
            }
            case REGEX -> {
                if (m.getRegex().equals("*")) {
                    h.setPresentMatch(true);
                } else {
                    h.setSafeRegexMatch(RegexMatcher.newBuilder().setRegex(m.getRegex()));
                }
            }
            default -> h.setPresentMatch(true);
        }
        return h.build();
    }

    private static HTTPFault fault(HTTPFaultInjection f) {
        HTTPFault.Builder b = HTTPFault.newBuilder();
        if (f.hasAbort()) {
            FaultAbort.Builder abort = FaultAbort.newBuilder().setPercentage(percent(f.getAbort().hasPercentage()
                    ? f.getAbort().getPercentage().getValue() : 100));
            if (!f.getAbort().getGrpcStatus().isEmpty()) {
                abort.setGrpcStatus(GrpcStatus.code(f.getAbort().getGrpcStatus()));
            } else {
                abort.setHttpStatus(f.getAbort().getHttpStatus());
            }
            b.setAbort(abort);
        }
        if (f.hasDelay() && f.getDelay().hasFixedDelay()) {
            b.setDelay(FaultDelay.newBuilder().setFixedDelay(f.getDelay().getFixedDelay())
                    .setPercentage(percent(f.getDelay().hasPercentage() ? f.getDelay().getPercentage().getValue() : 100)));
        }
        return b.build();
    }

    /** Istio's percent (0-100, fractional) as Envoy's per-million fraction. */
    private static FractionalPercent percent(double p) {
        return FractionalPercent.newBuilder().setNumerator((int) Math.round(p * 10_000))
                .setDenominator(FractionalPercent.DenominatorType.MILLION).build();
    }
}
