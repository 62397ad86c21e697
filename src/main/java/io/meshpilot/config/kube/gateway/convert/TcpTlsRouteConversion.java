package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.PortSelector;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSMatchAttributes;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.util.List;

/**
 * One TCPRoute or TLSRoute rule into an Istio TCP or TLS route (istiod's convertTCPRoute and
 * convertTLSRoute): the weighted backends; a TLS route matches the route's hostnames by SNI
 * ({@code *} when it has none). With no backend of weight, connections go to a destination
 * that never exists, so they are refused (istiod's stand-in for the API's "reject").
 */
final class TcpTlsRouteConversion {
    /** istiod's never-existing destination for a rule whose backends all have weight 0. */
    static final RouteDestination ZERO_WEIGHT = RouteDestination.newBuilder()
            .setDestination(Destination.newBuilder().setHost("internal.cluster.local").setSubset("zero-weight")
                    .setPort(PortSelector.newBuilder().setNumber(65535)))
            .build();

    private final Backends backends;

    TcpTlsRouteConversion(Backends backends) {
        this.backends = backends;
    }

    Converted<TCPRoute> tcp(GatewayApiObject route, JsonObject rule, boolean enforceGrants) {
        Converted<List<RouteDestination>> destinations = destinations(route, rule, enforceGrants);
        if (destinations.hardError()) {
            return Converted.failed(destinations.error());
        }
        return new Converted<>(TCPRoute.newBuilder().addAllRoute(destinations.value()).build(), destinations.error());
    }

    Converted<TLSRoute> tls(GatewayApiObject route, JsonObject rule, boolean enforceGrants) {
        List<JsonObject> backendRefs = JsonFields.objects(rule, "backendRefs");
        if (Backends.weightSum(backendRefs) == 0) {
            // istiod sets no SNI match on this one
            return Converted.ok(TLSRoute.newBuilder().addRoute(ZERO_WEIGHT).build());
        }
        Converted<List<RouteDestination>> destinations = destinations(route, rule, enforceGrants);
        if (destinations.hardError()) {
            return Converted.failed(destinations.error());
        }
        List<String> hostnames = JsonFields.strings(route.spec(), "hostnames");
        TLSRoute out = TLSRoute.newBuilder()
                .addMatch(TLSMatchAttributes.newBuilder().addAllSniHosts(hostnames.isEmpty() ? List.of("*") : hostnames))
                .addAllRoute(destinations.value()).build();
        return new Converted<>(out, destinations.error());
    }

    private Converted<List<RouteDestination>> destinations(GatewayApiObject route, JsonObject rule,
                                                           boolean enforceGrants) {
        List<JsonObject> backendRefs = JsonFields.objects(rule, "backendRefs");
        if (Backends.weightSum(backendRefs) == 0) {
            return Converted.ok(List.of(ZERO_WEIGHT));
        }
        return backends.tcp(backendRefs, route.kind(), route.namespace(), enforceGrants);
    }
}
