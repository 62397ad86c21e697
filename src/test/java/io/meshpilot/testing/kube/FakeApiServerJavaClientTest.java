package io.meshpilot.testing.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.reflect.TypeToken;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.informer.SharedInformerFactory;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.AuthorizationV1Api;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1LoadBalancerIngress;
import io.kubernetes.client.openapi.models.V1LoadBalancerStatus;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1ResourceAttributes;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServiceList;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1ServiceSpec;
import io.kubernetes.client.openapi.models.V1ServiceStatus;
import io.kubernetes.client.openapi.models.V1SubjectAccessReview;
import io.kubernetes.client.openapi.models.V1SubjectAccessReviewSpec;
import io.kubernetes.client.util.Config;
import io.kubernetes.client.util.Watch;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The official Kubernetes Java client against the API server stand-in, through the kubeconfig
 * it writes: list with selectors, watch from a resourceVersion with bookmarks, 410 Gone after
 * a compaction, and a shared informer that relists on 410 and resumes after the server is
 * stopped, or killed, and restarted on the same port.
 */
class FakeApiServerJavaClientTest {
    private static final Duration WAIT = Duration.ofSeconds(30);

    @TempDir
    Path dir;
    private FakeApiServer server;
    private ApiClient client;
    private CoreV1Api core;

    @BeforeEach
    void start() throws IOException {
        server = FakeApiServer.start();
        server.bookmarkInterval(Duration.ofMillis(200));
        client = Config.fromConfig(server.writeKubeconfig(dir).toString());
        // watches are long reads; the informer sets its own timeouts through the call
        client.setHttpClient(client.getHttpClient().newBuilder().readTimeout(Duration.ZERO).build());
        core = new CoreV1Api(client);
        server.apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: other}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: a, namespace: default, labels: {app: a, tier: web}}
                spec: {ports: [{port: 80, name: http}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: b, namespace: default, labels: {app: b, tier: web}}
                spec: {ports: [{port: 80, name: http}]}
                ---
                apiVersion: v1
                kind: Service
                metadata: {name: c, namespace: other, labels: {app: c}}
                spec: {ports: [{port: 81, name: grpc}]}
                """);
    }

    @AfterEach
    void stop() {
        server.close();
    }

    @Test
    void listsWithSelectorsAndWatchesFromAVersionWithBookmarks() throws Exception {
        assertEquals(List.of("a", "b"), names(core.listNamespacedService("default").execute()));
        assertEquals(List.of("a", "b", "c"), names(core.listServiceForAllNamespaces().execute()));
        assertEquals(List.of("b"), names(core.listServiceForAllNamespaces().labelSelector("tier=web,app!=a").execute()));
        assertEquals(List.of("c"), names(core.listServiceForAllNamespaces().labelSelector("!tier").execute()));
        assertEquals(List.of("a"), names(core.listServiceForAllNamespaces()
                .fieldSelector("metadata.namespace=default,metadata.name=a").execute()));
        V1ServiceList paged = core.listServiceForAllNamespaces().limit(2).execute();
        assertEquals(List.of("a", "b"), names(paged));
        assertEquals(List.of("c"), names(core.listServiceForAllNamespaces().limit(2)
                ._continue(paged.getMetadata().getContinue()).execute()));

        V1ServiceList list = core.listNamespacedService("default").execute();
        long listed = Long.parseLong(list.getMetadata().getResourceVersion());
        try (Watch<V1Service> watch = watch(list.getMetadata().getResourceVersion())) {
            BlockingQueue<Watch.Response<V1Service>> events = drain(watch);
            server.apply("""
                    apiVersion: v1
                    kind: Service
                    metadata: {name: a, namespace: default, labels: {app: a, tier: web, changed: "yes"}}
                    spec: {ports: [{port: 80, name: http}]}
                    """);
            server.delete("v1", "Service", "default", "b");
            server.delete("v1", "Service", "other", "c");

            Watch.Response<V1Service> modified = nextNonBookmark(events);
            assertEquals("MODIFIED", modified.type);
            assertEquals("yes", modified.object.getMetadata().getLabels().get("changed"));
            Watch.Response<V1Service> deleted = nextNonBookmark(events);
            assertEquals("DELETED", deleted.type);
            assertEquals("b", deleted.object.getMetadata().getName());
            long deletedAt = Long.parseLong(deleted.object.getMetadata().getResourceVersion());
            assertTrue(deletedAt > listed);

            // bookmarks: nothing else changes in default, and the version moves on past the deletion
            Watch.Response<V1Service> bookmark = poll(events);
            while (!"BOOKMARK".equals(bookmark.type)) {
                bookmark = poll(events);
            }
            assertTrue(Long.parseLong(bookmark.object.getMetadata().getResourceVersion()) >= deletedAt);
        }
    }

    @Test
    void aCompactedVersionIsGoneAndAFreshListWatchesAgain() throws Exception {
        String old = core.listNamespacedService("default").execute().getMetadata().getResourceVersion();
        server.compact();
        try (Watch<V1Service> watch = watch(old)) {
            Watch.Response<V1Service> error = poll(drain(watch));
            assertEquals("ERROR", error.type);
            assertNotNull(error.status, "the ERROR event carries a Status");
            assertEquals(410, error.status.getCode());
            assertEquals("Expired", error.status.getReason());
        }
        String fresh = core.listNamespacedService("default").execute().getMetadata().getResourceVersion();
        try (Watch<V1Service> watch = watch(fresh)) {
            BlockingQueue<Watch.Response<V1Service>> events = drain(watch);
            server.delete("v1", "Service", "default", "a");
            Watch.Response<V1Service> deleted = nextNonBookmark(events);
            assertEquals("DELETED", deleted.type);
            assertEquals("a", deleted.object.getMetadata().getName());
        }
    }

    @Test
    void subjectAccessReviewsAllowOnlyWhatWasGranted() throws Exception {
        String user = "system:serviceaccount:edge:gw";
        server.accessReviews().allow(user, "list", "secrets", "edge");
        AuthorizationV1Api authz = new AuthorizationV1Api(client);
        V1SubjectAccessReview granted = authz.createSubjectAccessReview(review(user, "edge")).execute();
        assertTrue(granted.getStatus().getAllowed(), granted.toString());
        assertTrue(granted.getStatus().getReason().contains("RoleBinding"), granted.toString());
        V1SubjectAccessReview other = authz.createSubjectAccessReview(review(user, "shop")).execute();
        assertFalse(other.getStatus().getAllowed(), other.toString());
        server.accessReviews().revoke(user);
        assertFalse(authz.createSubjectAccessReview(review(user, "edge")).execute().getStatus().getAllowed());
        assertEquals(List.of(new SubjectAccessReviews.Question(user, "list", "secrets", "edge"),
                new SubjectAccessReviews.Question(user, "list", "secrets", "shop"),
                new SubjectAccessReviews.Question(user, "list", "secrets", "edge")), server.accessReviews().asked());
        ApiException noUser = assertThrows(ApiException.class, () -> authz.createSubjectAccessReview(
                new V1SubjectAccessReview().spec(new V1SubjectAccessReviewSpec())).execute());
        assertEquals(422, noUser.getCode());
    }

    private static V1SubjectAccessReview review(String user, String namespace) {
        return new V1SubjectAccessReview().apiVersion("authorization.k8s.io/v1").kind("SubjectAccessReview")
                .spec(new V1SubjectAccessReviewSpec().user(user).resourceAttributes(
                        new V1ResourceAttributes().namespace(namespace).verb("list").resource("secrets")));
    }

    @Test
    void createUpdateConflictsAndTheStatusSubresource() throws Exception {
        V1Service created = core.createNamespacedService("default", new V1Service()
                .metadata(new V1ObjectMeta().name("d").labels(Map.of("app", "d")))
                .spec(new V1ServiceSpec().ports(List.of(new V1ServicePort().name("http").port(8080)))))
                .execute();
        assertNotNull(created.getMetadata().getUid());
        ApiException exists = assertThrows(ApiException.class, () -> core.createNamespacedService("default",
                new V1Service().metadata(new V1ObjectMeta().name("d"))).execute());
        assertEquals(409, exists.getCode());
        assertTrue(exists.getResponseBody().contains("\"reason\":\"AlreadyExists\""), exists.getResponseBody());
        ApiException missing = assertThrows(ApiException.class,
                () -> core.readNamespacedService("nope", "default").execute());
        assertEquals(404, missing.getCode());
        assertTrue(missing.getResponseBody().contains("\"reason\":\"NotFound\""), missing.getResponseBody());

        // optimistic concurrency: the first update wins, the second (same base version) is refused
        V1Service first = core.readNamespacedService("d", "default").execute();
        first.getMetadata().putLabelsItem("writer", "first");
        core.replaceNamespacedService("d", "default", first).execute();
        first.getMetadata().putLabelsItem("writer", "second");
        ApiException conflict = assertThrows(ApiException.class,
                () -> core.replaceNamespacedService("d", "default", first).execute());
        assertEquals(409, conflict.getCode());
        assertTrue(conflict.getResponseBody().contains("\"reason\":\"Conflict\""), conflict.getResponseBody());

        // status only through the status subresource
        V1Service current = core.readNamespacedService("d", "default").execute();
        current.status(new V1ServiceStatus().loadBalancer(new V1LoadBalancerStatus()
                .ingress(List.of(new V1LoadBalancerIngress().ip("10.0.0.9")))));
        V1Service withStatus = core.replaceNamespacedServiceStatus("d", "default", current).execute();
        assertEquals("10.0.0.9", withStatus.getStatus().getLoadBalancer().getIngress().get(0).getIp());
        withStatus.getStatus().getLoadBalancer().getIngress().get(0).ip("10.9.9.9");
        withStatus.getMetadata().putLabelsItem("writer", "third");
        V1Service replaced = core.replaceNamespacedService("d", "default", withStatus).execute();
        assertEquals("third", replaced.getMetadata().getLabels().get("writer"));
        assertEquals("10.0.0.9", replaced.getStatus().getLoadBalancer().getIngress().get(0).getIp());
    }

    @Test
    void anInformerRelistsAfterGoneAndResumesAfterARestart() throws Exception {
        SharedInformerFactory factory = new SharedInformerFactory(client);
        SharedIndexInformer<V1Service> informer = factory.sharedIndexInformerFor(
                params -> core.listServiceForAllNamespaces().resourceVersion(params.resourceVersion)
                        .timeoutSeconds(params.timeoutSeconds).watch(params.watch).allowWatchBookmarks(true)
                        .buildCall(null),
                V1Service.class, V1ServiceList.class);
        Set<String> seen = ConcurrentHashMap.newKeySet();
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Service s) {
                seen.add(s.getMetadata().getName());
            }

            @Override
            public void onUpdate(V1Service before, V1Service after) {
                seen.add(after.getMetadata().getName());
            }

            @Override
            public void onDelete(V1Service s, boolean unknownFinalState) {
                seen.remove(s.getMetadata().getName());
            }
        });
        factory.startAllRegisteredInformers();
        try {
            await(informer::hasSynced, "informer synced");
            await(() -> seen.equals(Set.of("a", "b", "c")), "the informer's initial list");
            server.delete("v1", "Service", "default", "b");
            await(() -> seen.equals(Set.of("a", "c")), "the deletion, through the watch");
            long listsBefore = lists();

            server.compact();
            server.apply(service("after-compact"));
            await(() -> seen.contains("after-compact"), "a change after the compaction");
            assertTrue(lists() > listsBefore, "the informer listed again after 410 Gone: " + server.requestLog());

            server.stop();
            server.apply(service("while-down"));
            server.delete("v1", "Service", "default", "a");
            server.restart();
            await(() -> seen.equals(Set.of("c", "after-compact", "while-down")), "the changes made while stopped");
            server.apply(service("after-restart"));
            await(() -> seen.contains("after-restart"), "a change after the restart");

            // killed mid-watch: the stream is cut, not ended
            server.kill();
            server.apply(service("while-killed"));
            server.restart();
            await(() -> seen.contains("while-killed"), "the change made while killed");
        } finally {
            factory.stopAllRegisteredInformers();
        }
    }

    private long lists() {
        return server.requestLog().stream()
                .filter(r -> r.startsWith("GET /api/v1/services") && !r.contains("watch=true")).count();
    }

    private static String service(String name) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %s, namespace: default}
                spec: {ports: [{port: 80, name: http}]}
                """.formatted(name);
    }

    private Watch<V1Service> watch(String resourceVersion) throws ApiException {
        return Watch.createWatch(client, core.listNamespacedService("default").watch(true)
                        .resourceVersion(resourceVersion).allowWatchBookmarks(true).timeoutSeconds(60).buildCall(null),
                new TypeToken<Watch.Response<V1Service>>() { }.getType());
    }

    /** Reads the watch on a thread of its own until it ends or is closed. */
    private static BlockingQueue<Watch.Response<V1Service>> drain(Watch<V1Service> watch) {
        BlockingQueue<Watch.Response<V1Service>> events = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() -> {
            try {
                for (Watch.Response<V1Service> e : watch) {
                    events.add(e);
                }
            } catch (RuntimeException closed) {
                // the test closed the watch
            }
        });
        return events;
    }

    private static Watch.Response<V1Service> poll(BlockingQueue<Watch.Response<V1Service>> events)
            throws InterruptedException {
        Watch.Response<V1Service> e = events.poll(WAIT.toSeconds(), TimeUnit.SECONDS);
        assertNotNull(e, "no watch event within " + WAIT);
        return e;
    }

    private static Watch.Response<V1Service> nextNonBookmark(BlockingQueue<Watch.Response<V1Service>> events)
            throws InterruptedException {
        Watch.Response<V1Service> e = poll(events);
        while ("BOOKMARK".equals(e.type)) {
            e = poll(events);
        }
        return e;
    }

    private static void await(BooleanSupplier condition, String what) throws InterruptedException {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + WAIT + ": " + what);
            }
            Thread.sleep(20);
        }
    }

    private static List<String> names(V1ServiceList list) {
        return list.getItems().stream().map(s -> s.getMetadata().getName()).toList();
    }
}
