package io.meshpilot.networking.grpcgen;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The form of proxyless RDS that every gRPC xDS stack reads: header matches in HeaderMatcher's
 * original fields (C-core 1.51 NACKs {@code string_match}: "Invalid route header matcher
 * specified") and each domain of a virtual host once. The end-to-end proof with real clients is
 * {@code XdsClientScenario} (grpc-java, grpc-js, C-core); this checks the served resource itself, over a real ADS stream.
 */
class GrpcRouteFormTest {
    static final String NAME = "echo.test.svc.cluster.local:7070";

    @TempDir
    Path dir;

    @Test
    void headerMatchesUseTheOriginalFieldsAndDomainsAreUnique() throws Exception {
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("echo.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo.test.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 7070, name: grpc, protocol: GRPC}]
                  endpoints: [{address: 127.0.0.1}]
                ---
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: echo, namespace: test}
                spec:
                  hosts: [echo]
                  http:
                  - match:
                    - headers:
                        a-exact: {exact: jason}
                        b-prefix: {prefix: ja}
                        c-regex: {regex: "j.*n"}
                        e-empty: {}
                    route: [{destination: {host: echo}}]
                """);
        try (MeshPilotServer server = TestServers.start(dir);
             AdsClient grpc = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~grpc.test~test.svc.cluster.local",
                     Map.of("NAMESPACE", "test", "GENERATOR", "grpc"))) {
            assertEquals("[]", Http.get(server.ports().get("http"), "/api/v1/config-errors").body());
            grpc.subscribe(TypeUrls.ROUTE, List.of(NAME));
            RouteConfiguration rc = grpc.await(TypeUrls.ROUTE, Duration.ofSeconds(20)).getResources(0)
                    .unpack(RouteConfiguration.class);
            VirtualHost vh = rc.getVirtualHosts(0);
            assertEquals(List.of(NAME, "echo.test.svc.cluster.local"), vh.getDomainsList(), "each domain once");
            assertEquals(vh.getDomainsCount(), new HashSet<>(vh.getDomainsList()).size());

            Map<String, HeaderMatcher> headers = vh.getRoutes(0).getMatch().getHeadersList().stream()
                    .collect(Collectors.toMap(HeaderMatcher::getName, h -> h));
            assertEquals(4, headers.size(), rc.toString());
            for (HeaderMatcher h : headers.values()) {
                assertEquals(false, h.hasStringMatch(), "no string_match: " + h);
            }
            assertEquals(HeaderMatcher.HeaderMatchSpecifierCase.EXACT_MATCH, headers.get("a-exact").getHeaderMatchSpecifierCase());
            assertEquals("jason", headers.get("a-exact").getExactMatch());
            assertEquals("ja", headers.get("b-prefix").getPrefixMatch());
            assertEquals("j.*n", headers.get("c-regex").getSafeRegexMatch().getRegex());
            assertEquals(true, headers.get("e-empty").getPresentMatch(), "an empty match means present, as in istiod");
        }
    }
}
