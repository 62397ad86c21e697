package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * Debug access from a caller that is not on loopback, as istioctl reaches 15014: the http and
 * monitoring listeners bound on this machine's first non-loopback IPv4 address, called from
 * it (so the server sees that address, not 127.0.0.1), without credentials and with
 * Bearer tokens of a JWT_RULE issuer for the system namespace and for a workload namespace.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RemoteDebugAccessTest {
    static final Duration WAIT = Duration.ofSeconds(10);
    static final String DEFAULT_PROXY = "sidecar~10.0.0.1~a.default~default.svc.cluster.local";
    static final String PROD_PROXY = "sidecar~10.0.0.2~b.prod~prod.svc.cluster.local";
    final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    String address;
    Tokens tokens;
    MeshPilotServer server;
    final List<AdsClient> proxies = new ArrayList<>();

    @BeforeAll
    void start(@TempDir Path dir) throws Exception {
        Optional<String> local = nonLoopbackAddress();
        assumeTrue(local.isPresent(), "this machine has no non-loopback IPv4 address to call from");
        address = local.get();
        tokens = new Tokens("k1");
        Path jwks = Files.writeString(dir.resolve("jwks.json"), tokens.jwks());
        Files.createDirectories(dir.resolve("config"));
        List<String> flags = new ArrayList<>(TestServers.flags(dir));
        flags.set(flags.indexOf("--httpAddr") + 1, address + ":0");
        flags.set(flags.indexOf("--monitoringAddr") + 1, address + ":0");
        server = MeshPilotServer.start(TestServers.args(flags, Map.of("JWT_RULE", Tokens.rule(jwks))));
        for (String id : List.of(DEFAULT_PROXY, PROD_PROXY)) {
            AdsClient proxy = new AdsClient(server.ports().get("grpc"), id, Map.of());
            proxies.add(proxy);
            proxy.subscribe(TypeUrls.CLUSTER, List.of());
            proxy.await(TypeUrls.CLUSTER, WAIT);
        }
    }

    @AfterAll
    void stop() {
        proxies.forEach(AdsClient::close);
        if (server != null) {
            server.close();
        }
    }

    static Optional<String> nonLoopbackAddress() throws IOException {
        for (NetworkInterface nic : NetworkInterface.networkInterfaces().toList()) {
            if (!nic.isUp() || nic.isLoopback()) {
                continue;
            }
            for (InetAddress a : nic.inetAddresses().toList()) {
                if (a instanceof Inet4Address && !a.isLoopbackAddress() && !a.isLinkLocalAddress()) {
                    return Optional.of(a.getHostAddress());
                }
            }
        }
        return Optional.empty();
    }

    record Reply(int status, String body) {
    }

    Reply get(String listener, String path, String token) throws Exception {
        return getAuthorized(listener, path, token == null ? null : "Bearer " + token);
    }

    Reply getAuthorized(String listener, String path, String authorization) throws Exception {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://" + address + ":"
                + server.ports().get(listener) + path)).timeout(WAIT);
        if (authorization != null) {
            b.header("Authorization", authorization);
        }
        HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
        return new Reply(r.statusCode(), r.body());
    }

    Reply delete(String listener, String path, String token) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://" + address + ":" + server.ports().get(listener) + path))
                .timeout(WAIT).header("Authorization", "Bearer " + token).DELETE().build();
        HttpResponse<String> reply = client.send(r, HttpResponse.BodyHandlers.ofString());
        return new Reply(reply.statusCode(), reply.body());
    }

    String token(String namespace) throws Exception {
        return tokens.sign(Tokens.serviceAccount(namespace, "debugger"));
    }

    @Test
    void withoutCredentialsTheCallerIsRefusedWithTheReason() throws Exception {
        for (String listener : List.of("monitoring", "http")) {
            Reply r = get(listener, "/debug/syncz", null);
            assertEquals(401, r.status(), listener + ": " + r.body());
            assertTrue(r.body().contains("unauthenticated") && r.body().contains("no credentials"), r.body());
        }
        assertEquals(401, get("http", "/api/v1/server", null).status());
        // the open surface stays open
        assertEquals(200, get("monitoring", "/metrics", null).status());
    }

    @Test
    void aBadTokenIsRefused() throws Exception {
        Tokens stranger = new Tokens("k1");
        Reply r = get("monitoring", "/debug/syncz", stranger.sign(Tokens.serviceAccount("istio-system", "istiod")));
        assertEquals(401, r.status(), r.body());
    }

    /** istiod's HTTP debug endpoints read the token after "Bearer " or "Istio " (ExtractRequestToken). */
    @Test
    void theIstioSchemeCarriesATokenOnTheHttpDebugEndpoints() throws Exception {
        Reply syncz = getAuthorized("monitoring", "/debug/syncz", "Istio " + token("istio-system"));
        assertEquals(200, syncz.status(), syncz.body());
        assertEquals(401, getAuthorized("monitoring", "/debug/syncz", "istio " + token("istio-system")).status());
    }

    @Test
    void theSystemNamespaceReadsEverything() throws Exception {
        String token = token("istio-system");
        Reply syncz = get("monitoring", "/debug/syncz", token);
        assertEquals(200, syncz.status(), syncz.body());
        assertTrue(syncz.body().contains("a.default") && syncz.body().contains("b.prod"), syncz.body());
        assertEquals(200, get("http", "/debug/config_dump?proxyID=b.prod", token).status());
        assertEquals(200, get("http", "/api/v1/server", token).status());
        // reads only: a REST write would change the cluster's config with istiod's own rights
        Reply write = delete("http", "/api/v1/configs/networking.istio.io/v1/virtualservices/default/any", token);
        assertEquals(403, write.status(), write.body());
        assertTrue(write.body().contains("loopback callers only"), write.body());
    }

    @Test
    void aWorkloadNamespaceReadsOnlyItsOwnProxies() throws Exception {
        String token = token("default");
        Reply syncz = get("monitoring", "/debug/syncz", token);
        assertEquals(403, syncz.status(), syncz.body());
        assertTrue(syncz.body().contains("namespace default may read only"), syncz.body());
        assertEquals(403, get("http", "/api/v1/server", token).status());
        Reply own = get("monitoring", "/debug/config_dump?proxyID=a.default", token);
        assertEquals(200, own.status(), own.body());
        Reply other = get("monitoring", "/debug/config_dump?proxyID=b.prod", token);
        assertEquals(404, other.status(), other.body());
        assertTrue(other.body().contains("Proxy not connected to this Pilot instance"), other.body());
    }
}
