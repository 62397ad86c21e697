package io.meshpilot.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1NamespaceList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes client over real HTTP, against a minimal server that answers one list and
 * holds watches open: it connects from a kubeconfig, its informers sync, readiness names
 * what has not synced, and bad kubeconfigs fail with the file named.
 */
class KubeClientTest {
    @TempDir
    Path dir;
    private HttpServer server;
    private final CountDownLatch closing = new CountDownLatch(1);

    @AfterEach
    void stop() {
        closing.countDown();
        if (server != null) {
            server.stop(0);
        }
    }

    private Path kubeconfig(int port) throws IOException {
        return Files.writeString(dir.resolve("kubeconfig"), """
                apiVersion: v1
                kind: Config
                clusters:
                - name: test
                  cluster: {server: "http://127.0.0.1:%d"}
                contexts:
                - name: test
                  context: {cluster: test, user: test}
                current-context: test
                users:
                - name: test
                  user: {token: abc}
                """.formatted(port));
    }

    /** Lists one namespace; a watch stays open until the test ends; {@code listStatus} != 200 fails lists. */
    private int serve(int listStatus, AtomicInteger requests) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.setExecutor(Executors.newCachedThreadPool(r -> Thread.ofPlatform().daemon().unstarted(r)));
        server.createContext("/api/v1/namespaces", ex -> {
            requests.incrementAndGet();
            String query = ex.getRequestURI().getQuery();
            if (query != null && query.contains("watch=true")) {
                ex.getResponseHeaders().add("Content-Type", "application/json");
                ex.sendResponseHeaders(200, 0);
                ex.getResponseBody().flush();
                try {
                    closing.await(30, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                ex.close();
                return;
            }
            if (listStatus != 200) {
                reply(ex, listStatus, "{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":" + listStatus + "}");
                return;
            }
            reply(ex, 200, """
                    {"kind":"NamespaceList","apiVersion":"v1","metadata":{"resourceVersion":"7"},
                     "items":[{"metadata":{"name":"default","resourceVersion":"3"}}]}""");
        });
        server.start();
        return server.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, int status, String body) throws IOException {
        byte[] b = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().add("Content-Type", "application/json");
        ex.sendResponseHeaders(status, b.length);
        ex.getResponseBody().write(b);
        ex.close();
    }

    @Test
    void informersSyncFromAKubeconfigCluster() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        int port = serve(200, requests);
        try (KubeClient client = KubeClient.create(new KubeClientOptions(kubeconfig(port), 80, 160))) {
            var namespaces = client.informers().sharedIndexInformerFor(
                    new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces",
                            client.apiClient()), V1Namespace.class, 0);
            assertEquals(List.of("V1Namespace"), client.notSynced(), "not started: not synced, by name");
            assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(30)));
            assertEquals(List.of("default"), namespaces.getIndexer().list().stream()
                    .map(n -> n.getMetadata().getName()).toList());
            // plain requests through the same client work too (the library's own API classes run)
            assertEquals("default", new CoreV1Api(client.apiClient()).listNamespace().execute()
                    .getItems().get(0).getMetadata().getName());
        }
    }

    @Test
    void anInformerThatCannotListIsNamedAsNotSynced() throws Exception {
        AtomicInteger requests = new AtomicInteger();
        int port = serve(500, requests);
        try (KubeClient client = KubeClient.create(new KubeClientOptions(kubeconfig(port), 80, 160))) {
            client.informers().sharedIndexInformerFor(
                    new GenericKubernetesApi<>(V1Namespace.class, V1NamespaceList.class, "", "v1", "namespaces",
                            client.apiClient()), V1Namespace.class, 0);
            assertEquals(List.of("V1Namespace"), client.runAndWait(Duration.ofMillis(300)));
            assertTrue(requests.get() >= 1, "it asked");
        }
    }

    @Test
    void aKubeconfigWithoutAClusterFailsNamingTheFile() throws Exception {
        Path bad = Files.writeString(dir.resolve("empty-kubeconfig"), "apiVersion: v1\nkind: Config\n");
        IOException e = assertThrows(IOException.class, () -> KubeClient.create(new KubeClientOptions(bad, 80, 160)));
        assertTrue(e.getMessage().contains(bad.toString()), e.getMessage());
    }

    @Test
    void inClusterWithoutAServiceAccountFailsNamingTheFile() throws Exception {
        Path sa = Files.createDirectories(dir.resolve("sa"));
        var options = new KubeClientOptions(null, 80, 160, Duration.ofSeconds(1), "me", Duration.ofSeconds(30),
                new InClusterConfig("127.0.0.1", 6443, sa));
        IOException e = assertThrows(IOException.class, () -> KubeClient.create(options));
        assertTrue(e.getMessage().contains(sa.resolve("token").toString()) && e.getMessage().contains("in-cluster"),
                e.getMessage());
    }

    @Test
    void theThrottleLetsABurstThroughThenPacesAtQps() {
        RequestRateLimiter limiter = new RequestRateLimiter(10, 3);
        assertEquals(0, limiter.reserveNanos());
        assertEquals(0, limiter.reserveNanos());
        assertEquals(0, limiter.reserveNanos());
        long wait = limiter.reserveNanos();
        assertTrue(wait > 0 && wait <= 100_000_000L, "the fourth waits at most 1/qps: " + wait);
        assertTrue(limiter.reserveNanos() > wait, "the fifth queues behind the fourth");
    }
}
