package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.DeltaAdsClient;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The xDS debug type istio.io/debug/syncz is authorized as istiod's StatusGen does
 * (handleInternalRequest): a stream without a verified identity is ended Unauthenticated; a
 * workload namespace sees only its own proxies; the system namespace and
 * DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES see every proxy. Real TLS on the secure port with
 * XDS_AUTH, identities from a header authenticator.
 */
class DebugXdsAuthorizationTest {
    static final Duration WAIT = Duration.ofSeconds(20);
    static final String BYSTANDER = "sidecar~10.0.0.9~bystander.other~other.svc.cluster.local";

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static AdsClient bystander;

    @BeforeAll
    static void start() throws Exception {
        Files.createDirectories(dir.resolve("config"));
        server = TestServers.start(dir, Map.of("XDS_AUTH", "true", "DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES", "trusted"));
        XdsAuthTest.registerHeaderAuthenticator(server);
        // a proxy of another namespace, connected on the plaintext port (not authenticated there)
        bystander = new AdsClient(server.ports().get("grpc"), BYSTANDER, Map.of("NAMESPACE", "other"));
        bystander.subscribe(TypeUrls.CLUSTER, List.of());
        assertNotNull(bystander.await(TypeUrls.CLUSTER, WAIT));
    }

    @AfterAll
    static void stop() {
        if (bystander != null) {
            bystander.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private static AdsClient caller(String namespace) throws Exception {
        ServingCertificate cert = server.server().components().certificates().serving();
        return new AdsClient(XdsAuthTest.tlsAs(server.ports().get("grpc-secure"), cert,
                "spiffe://cluster.local/ns/" + namespace + "/sa/asker"),
                "sidecar~10.0.0.1~asker." + namespace + "~" + namespace + ".svc.cluster.local",
                Map.of("NAMESPACE", namespace));
    }

    /** The node ids a syncz answer reports on, asked by a caller of {@code namespace}. */
    private static Set<String> synczNodes(String namespace) throws Exception {
        try (AdsClient c = caller(namespace)) {
            c.subscribe(TypeUrls.DEBUG_SYNCZ, List.of());
            DiscoveryResponse syncz = c.await(TypeUrls.DEBUG_SYNCZ, WAIT);
            assertNotNull(syncz, "no syncz answer for namespace " + namespace + ": " + c.error());
            return syncz.getResourcesList().stream().map(a -> {
                try {
                    return a.unpack(ClientConfig.class).getNode().getId();
                } catch (InvalidProtocolBufferException e) {
                    throw new AssertionError(e);
                }
            }).collect(Collectors.toSet());
        }
    }

    @Test
    void aStreamWithoutAVerifiedIdentityIsEndedUnauthenticated() throws Exception {
        try (AdsClient c = new AdsClient(server.ports().get("grpc"), "sidecar~10.0.0.2~anon.other~other.svc.cluster.local",
                Map.of("NAMESPACE", "other"))) {
            c.subscribe(TypeUrls.DEBUG_SYNCZ, List.of());
            Throwable error = c.awaitError(WAIT);
            assertNotNull(error, "answered: " + c.received());
            assertEquals(Status.Code.UNAUTHENTICATED, Status.fromThrowable(error).getCode(), error.toString());
        }
        try (DeltaAdsClient d = new DeltaAdsClient(server.ports().get("grpc"),
                "sidecar~10.0.0.3~anon-delta.other~other.svc.cluster.local")) {
            d.send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(TypeUrls.DEBUG_SYNCZ));
            Throwable error = d.awaitError(WAIT);
            assertNotNull(error, "a delta syncz request without identity is not answered");
            assertEquals(Status.Code.UNAUTHENTICATED, Status.fromThrowable(error).getCode(), error.toString());
        }
    }

    @Test
    void aWorkloadNamespaceSeesOnlyItsOwnProxies() throws Exception {
        Set<String> nodes = synczNodes("default");
        assertEquals(Set.of("sidecar~10.0.0.1~asker.default~default.svc.cluster.local"), nodes);
    }

    @Test
    void theSystemNamespaceAndTheAllowedNamespacesSeeEveryProxy() throws Exception {
        assertTrue(synczNodes("istio-system").contains(BYSTANDER), "istio-system sees every namespace");
        assertTrue(synczNodes("trusted").contains(BYSTANDER), "an allowed namespace sees every namespace");
    }
}
