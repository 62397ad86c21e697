package io.meshpilot.security.credentials;

import static io.meshpilot.security.credentials.TestCredentials.selfSigned;
import static io.meshpilot.security.credentials.TestCredentials.tlsSecret;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.util.LabelSelector;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Secrets of a cluster as credentials, through a real informer against the API server
 * stand-in: credential keys of both Secret types read, other Secrets passed over, listeners told
 * of each credential that changed, and only the namespaces the mesh's discoverySelectors select
 * served, as istiod's informer filter.
 */
class KubeSecretCredentialsTest {
    static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient client;
    KubeSecretCredentials secrets;
    final List<Set<ConfigKey>> heard = new CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws Exception {
        api = FakeApiServer.start();
        api.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: edge, labels: {mesh: enabled}}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: outside}
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: docker, namespace: edge}
                type: kubernetes.io/dockerconfigjson
                data: {.dockerconfigjson: e30=}
                """);
        var edge = selfSigned("edge.example.com");
        var outside = selfSigned("outside.example.com");
        api.apply(tlsSecret("edge", "edge-cert", edge.cert(), edge.key(), null));
        api.apply(tlsSecret("outside", "outside-cert", outside.cert(), outside.key(), null));
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        secrets = new KubeSecretCredentials(client, "Kubernetes");
        secrets.addListener(heard::add);
        assertTrue(client.runAndWait(WAIT).isEmpty());
        Await.until("both Secrets read", WAIT, () -> secrets.all().size() == 2);
    }

    @AfterEach
    void stop() {
        secrets.close();
        client.close();
        api.stop();
    }

    @Test
    void credentialsOfEveryNamespaceUntilDiscoverySelectorsNarrowThem() {
        assertTrue(secrets.exists("edge", "edge-cert"));
        assertTrue(secrets.exists("outside", "outside-cert"));
        assertFalse(secrets.exists("edge", "docker"), "not a credential");
        assertEquals(Set.of(Set.of(CredentialStore.key("edge", "edge-cert")),
                Set.of(CredentialStore.key("outside", "outside-cert"))), Set.copyOf(heard));

        client.discoveryNamespaces().setSelectors(List.of(new LabelSelector(Map.of("mesh", "enabled"), List.of())));
        assertTrue(secrets.exists("edge", "edge-cert"));
        assertFalse(secrets.exists("outside", "outside-cert"), "a namespace the mesh does not select");
        assertEquals(List.of("edge/edge-cert"), secrets.all().stream().map(Credential::key).toList());
    }

    @Test
    void aGenericSecretAndACaOnlyOneAndTheirRemoval() throws Exception {
        var generic = selfSigned("generic.example.com");
        var ca = selfSigned("Edge CA");
        api.apply(TestCredentials.genericSecretData("edge", "generic", generic.cert(), generic.key(), ca.cert()));
        api.apply("""
                apiVersion: v1
                kind: Secret
                metadata: {name: edge-cert-cacert, namespace: edge}
                data: {ca.crt: %s}
                """.formatted(Base64.getEncoder().encodeToString(ca.cert().getBytes(StandardCharsets.US_ASCII))));
        Await.until("both read", WAIT, () -> secrets.exists("edge", "generic") && secrets.exists("edge", "edge-cert-cacert"));
        assertEquals(generic.cert(), secrets.get("edge", "generic").orElseThrow().certificateChain());
        assertEquals(ca.cert(), secrets.caCertificate("edge", "generic-cacert").orElseThrow(), "-cacert of generic's cacert");
        assertEquals(ca.cert(), secrets.caCertificate("edge", "edge-cert-cacert").orElseThrow());
        assertFalse(secrets.get("edge", "edge-cert-cacert").orElseThrow().hasKeyPair());

        api.delete("v1", "Secret", "edge", "generic");
        Await.until("removed with its Secret", WAIT, () -> !secrets.exists("edge", "generic"));
        assertTrue(heard.contains(Set.of(CredentialStore.key("edge", "generic"))));
    }
}
