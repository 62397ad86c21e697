package io.meshpilot.networking.authn;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A RequestAuthentication in a --configDir reaches a sidecar over real ADS: the server's LDS
 * for the workload carries jwt_authn, first, on every inbound HTTP chain, and on none of its
 * outbound listeners; a sidecar of another namespace gets none.
 */
class RequestAuthenticationAdsTest {
    static final Duration WAIT = Duration.ofSeconds(20);

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int grpc;
    static String keys;

    @BeforeAll
    static void start() throws Exception {
        keys = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
        Path config = Files.createDirectories(dir.resolve("config"));
        Files.writeString(config.resolve("jwt.yaml"), """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [web.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 80, name: http, protocol: HTTP, targetPort: 8080}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.1}]
                ---
                apiVersion: security.istio.io/v1
                kind: RequestAuthentication
                metadata: {name: jwt, namespace: shop}
                spec:
                  jwtRules:
                  - issuer: testing@secure.istio.io
                    jwks: '%s'
                """.formatted(keys));
        server = TestServers.start(dir);
        grpc = server.ports().get("grpc");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** Per listener: the jwt_authn configs of its HTTP connection managers (the filter's index must be 0). */
    static Map<String, List<JwtAuthentication>> jwtByListener(String namespace) throws Exception {
        try (AdsClient c = new AdsClient(grpc, "sidecar~10.0.0.1~web-1." + namespace + "~" + namespace
                + ".svc.cluster.local", Map.of("NAMESPACE", namespace))) {
            c.subscribe(TypeUrls.LISTENER, List.of());
            DiscoveryResponse r = c.await(TypeUrls.LISTENER, WAIT);
            Map<String, List<JwtAuthentication>> out = new TreeMap<>();
            for (var a : r.getResourcesList()) {
                Listener l = a.unpack(Listener.class);
                List<JwtAuthentication> found = new ArrayList<>();
                for (FilterChain fc : l.getFilterChainsList()) {
                    for (Filter f : fc.getFiltersList()) {
                        if (f.getTypedConfig().is(HttpConnectionManager.class)) {
                            var filters = f.getTypedConfig().unpack(HttpConnectionManager.class).getHttpFiltersList();
                            for (int i = 0; i < filters.size(); i++) {
                                if (filters.get(i).getName().equals(JwtAuthnFilter.FILTER_NAME)) {
                                    assertEquals(0, i, l.getName() + ": jwt_authn first");
                                    found.add(filters.get(i).getTypedConfig().unpack(JwtAuthentication.class));
                                }
                            }
                        }
                    }
                }
                out.put(l.getName(), found);
            }
            return out;
        }
    }

    @Test
    void theWorkloadsInboundHttpChainsAuthenticateAndNothingElseDoes() throws Exception {
        Map<String, List<JwtAuthentication>> shop = jwtByListener("shop");
        assertTrue(shop.get("virtualInbound").size() >= 2, "mTLS and plaintext HTTP chains of port 8080 at least");
        for (JwtAuthentication a : shop.get("virtualInbound")) {
            assertEquals("testing@secure.istio.io", a.getProvidersOrThrow("origins-0").getIssuer());
            assertEquals(keys, a.getProvidersOrThrow("origins-0").getLocalJwks().getInlineString());
        }
        shop.forEach((name, found) -> {
            if (!name.equals("virtualInbound")) {
                assertEquals(List.of(), found, name + ": outbound listeners do not authenticate");
            }
        });
        jwtByListener("elsewhere").forEach((name, found) -> assertEquals(List.of(), found, "elsewhere " + name));
    }
}
