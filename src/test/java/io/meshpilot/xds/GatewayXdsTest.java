package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.config.route.v3.WeightedCluster;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedGateways;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The Gateway API push benchmark's build, once, at the benchmark's own size (100 Gateways, 1,000
 * HTTPRoutes): every gateway proxy gets the listener and the virtual hosts of its own Gateway's
 * routes through the server's generators, and the route change the benchmark pushes changes the
 * one route it names, so the benchmark cannot silently measure an empty or a smaller config.
 */
class GatewayXdsTest {
    static final int GATEWAYS = 100;
    static final int ROUTES = 1000;
    static GeneratedGateways world;

    @BeforeAll
    static void build() throws Exception {
        world = GeneratedGateways.of(GATEWAYS, ROUTES);
    }

    @AfterAll
    static void close() {
        world.close();
    }

    @Test
    void theConversionServesOneGatewayPerGatewayAndOneVirtualServicePerRoute() {
        assertEquals(GATEWAYS, world.converted().gateways().size());
        assertEquals(ROUTES, world.converted().virtualServices().size());
        assertEquals(List.of(), List.copyOf(world.converted().problems().keySet()), "every object converts in full");
    }

    @Test
    void everyGatewayProxyGetsItsListenerOn80WithTheVirtualHostsOfItsTenRoutes() throws Exception {
        PushContext push = world.push(1);
        GatewayXds xds = new GatewayXds();
        for (int g = 0; g < GATEWAYS; g++) {
            Proxy proxy = GeneratedGateways.gatewayProxy(g);
            Set<String> routeNames = GatewayXds.routeNames(proxy, push);
            assertEquals(Set.of("http.80"), routeNames, proxy.id());
            GatewayXds.Config config = xds.config(proxy, push, routeNames);
            assertEquals(List.of("0.0.0.0_80"), config.lds().getResourcesList().stream()
                    .map(a -> unpack(a, Listener.class).getName()).toList(), proxy.id());
            assertEquals(1, config.rds().getResourcesCount(), proxy.id());
            RouteConfiguration rc = unpack(config.rds().getResources(0), RouteConfiguration.class);
            List<String> expected = new ArrayList<>();
            for (int r = g; r < ROUTES; r += GATEWAYS) {
                expected.add(GeneratedGateways.routeHostname(r, GATEWAYS) + ":80");
            }
            assertEquals(expected.stream().sorted().toList(),
                    rc.getVirtualHostsList().stream().map(VirtualHost::getName).toList(), proxy.id());
            for (VirtualHost vh : rc.getVirtualHostsList()) {
                assertEquals(2, vh.getRoutesCount(), vh.getName() + ": the /api split and the x-canary match");
            }
            assertEquals(config.lds().getSerializedSize() + config.rds().getSerializedSize(), config.bytes());
        }
    }

    @Test
    void theRouteChangeChangesRouteZerosWeightsOnGatewayZeroOnly() throws Exception {
        GatewayXds xds = new GatewayXds();
        PushContext before = world.push(1);
        List<RouteConfiguration> routesBefore = allRoutes(xds, before);
        world.changeRoute();
        try {
            List<RouteConfiguration> routesAfter = allRoutes(xds, world.push(2));
            assertEquals(List.of(100 - GeneratedGateways.CHANGED_CANARY_WEIGHT, GeneratedGateways.CHANGED_CANARY_WEIGHT),
                    apiWeights(routesAfter.get(0), GeneratedGateways.routeHostname(0, GATEWAYS)));
            assertEquals(List.of(100 - GeneratedGateways.CANARY_WEIGHT, GeneratedGateways.CANARY_WEIGHT),
                    apiWeights(routesBefore.get(0), GeneratedGateways.routeHostname(0, GATEWAYS)));
            assertNotEquals(routesBefore.get(0), routesAfter.get(0));
            assertEquals(routesBefore.subList(1, GATEWAYS), routesAfter.subList(1, GATEWAYS),
                    "the other Gateways' routes are as before");
        } finally {
            world.changeRoute(); // back, for the other tests
        }
    }

    private static List<RouteConfiguration> allRoutes(GatewayXds xds, PushContext push) throws Exception {
        List<RouteConfiguration> out = new ArrayList<>();
        for (int g = 0; g < GATEWAYS; g++) {
            Proxy proxy = GeneratedGateways.gatewayProxy(g);
            out.add(unpack(xds.config(proxy, push, Set.of("http.80")).rds().getResources(0), RouteConfiguration.class));
        }
        return out;
    }

    /** The weights of the path-prefix route of {@code hostname}'s virtual host. */
    private static List<Integer> apiWeights(RouteConfiguration rc, String hostname) {
        VirtualHost vh = rc.getVirtualHostsList().stream().filter(v -> v.getName().equals(hostname + ":80"))
                .findFirst().orElseThrow();
        Route api = vh.getRoutesList().stream().filter(r -> r.getMatch().hasPathSeparatedPrefix()
                || r.getMatch().hasPrefix()).findFirst().orElseThrow(() -> new AssertionError(vh.toString()));
        return api.getRoute().getWeightedClusters().getClustersList().stream()
                .map(WeightedCluster.ClusterWeight::getWeight).map(w -> w.getValue()).toList();
    }

    private static <T extends Message> T unpack(Any any, Class<T> type) {
        try {
            return any.unpack(type);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
    }
}
