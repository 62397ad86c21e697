package io.meshpilot.config.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.util.LabelSelector;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CRD config store against an API server stand-in over real HTTP: objects applied to the
 * cluster are served and their changes arrive as events; an invalid object is reported and
 * not served while its neighbours are, and served once fixed; a CRD installed later is picked
 * up; writes go to the API server, whose 409 is the answer to a stale one.
 */
class CrdConfigStoreTest {
    static final Schemas SCHEMAS = Schemas.PILOT;

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient client;
    CrdConfigStore store;
    final LinkedBlockingQueue<ConfigEvent> events = new LinkedBlockingQueue<>();

    @BeforeEach
    void startApiServer() throws Exception {
        api = FakeApiServer.start();
    }

    @AfterEach
    void stop() {
        if (store != null) {
            store.close();
        }
        if (client != null) {
            client.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    /** The store over the stand-in, running, with its first list through. */
    void startStore() throws Exception {
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        store = new CrdConfigStore(client, SCHEMAS, new ConfigParser(SCHEMAS));
        SCHEMAS.all().forEach(s -> store.registerEventHandler(s.kind(), events::add));
        store.run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        await("store synced", store::hasSynced);
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    ConfigEvent nextEvent() throws InterruptedException {
        ConfigEvent e = events.poll(20, TimeUnit.SECONDS);
        assertNotNull(e, "no event within 20 s");
        return e;
    }

    static String vs(String name, String... hosts) {
        return """
                apiVersion: networking.istio.io/v1
                kind: VirtualService
                metadata: {name: %s, namespace: default}
                spec:
                  hosts: [%s]
                  http: [{route: [{destination: {host: reviews}}]}]
                """.formatted(name, String.join(", ", hosts));
    }

    /** A valid VirtualService spec for {@code hosts}. */
    static VirtualService spec(String... hosts) {
        return VirtualService.newBuilder().addAllHosts(List.of(hosts))
                .addHttp(HTTPRoute.newBuilder().addRoute(
                        HTTPRouteDestination.newBuilder().setDestination(
                                Destination.newBuilder().setHost("reviews"))))
                .build();
    }

    static List<String> hosts(Config c) {
        return ((VirtualService) c.spec()).getHostsList();
    }

    @Test
    void objectsAreServedAndTheirChangesArriveAsEvents() throws Exception {
        api.installIstioCrds();
        api.apply(vs("before-start", "a.example.com"));
        startStore();
        ConfigEvent added = nextEvent();
        assertEquals(ConfigEvent.Type.ADD, added.type());
        assertEquals("before-start", added.current().name());
        assertFalse(added.current().resourceVersion().isEmpty(), "the API server's resourceVersion");

        api.apply(vs("after-start", "b.example.com"));
        ConfigEvent second = nextEvent();
        assertEquals(ConfigEvent.Type.ADD, second.type());
        assertEquals(List.of("b.example.com"), hosts(store.get("VirtualService", "default", "after-start").orElseThrow()));

        api.apply(vs("after-start", "c.example.com"));
        ConfigEvent updated = nextEvent();
        assertEquals(ConfigEvent.Type.UPDATE, updated.type());
        assertEquals(List.of("b.example.com"), hosts(updated.old()));
        assertEquals(List.of("c.example.com"), hosts(updated.current()));

        // written in another served version: one object, read once, in the version istiod reads
        api.apply(vs("old-version", "d.example.com").replace("networking.istio.io/v1", "networking.istio.io/v1alpha3"));
        ConfigEvent other = nextEvent();
        assertEquals("old-version", other.current().name());
        assertEquals("v1", other.current().gvk().version());
        assertEquals(3, store.list("VirtualService", null).size());
        api.delete("networking.istio.io/v1alpha3", "VirtualService", "default", "old-version");
        assertEquals(ConfigEvent.Type.DELETE, nextEvent().type());

        store.delete("VirtualService", "default", "after-start", "");
        ConfigEvent deleted = nextEvent();
        assertEquals(ConfigEvent.Type.DELETE, deleted.type());
        assertEquals("after-start", deleted.old().name());
        assertTrue(store.get("VirtualService", "default", "after-start").isEmpty());
        assertEquals(1, store.list("VirtualService", null).size());
    }

    @Test
    void anInvalidObjectIsReportedAndNotServedItsNeighboursAreAndTheFixIsServed() throws Exception {
        api.installIstioCrds();
        startStore();
        api.apply(vs("good", "good.example.com"));
        api.apply(vs("flaky", "flaky.example.com"));
        await("two served", () -> store.list("VirtualService", "default").size() == 2);
        String goodVersion = store.get("VirtualService", "default", "flaky").orElseThrow().resourceVersion();

        // an invalid new object and an invalid change of a served one
        api.apply(vs("bad", "dup.example.com", "dup.example.com"));
        api.apply(vs("flaky", "x.example.com", "x.example.com"));
        await("both reported", () -> store.errors().size() == 2);
        List<DocumentError> errors = store.errors();
        DocumentError bad = errors.stream().filter(e -> e.name().equals("bad")).findFirst().orElseThrow();
        assertEquals("VirtualService", bad.kind());
        assertEquals("default", bad.namespace());
        assertEquals("spec.hosts[1]", bad.path());
        assertTrue(bad.reason().contains("duplicate hosts"), bad.reason());
        assertTrue(store.get("VirtualService", "default", "bad").isEmpty(), "an invalid object is not served");
        Config flaky = store.get("VirtualService", "default", "flaky").orElseThrow();
        assertEquals(goodVersion, flaky.resourceVersion(), "the last good version is still served");
        assertEquals(List.of("flaky.example.com"), hosts(flaky));
        assertEquals(List.of("good.example.com"), hosts(store.get("VirtualService", "default", "good").orElseThrow()));

        api.apply(vs("bad", "fixed.example.com"));
        api.apply(vs("flaky", "flaky2.example.com"));
        await("fixed objects served", () -> store.errors().isEmpty()
                && store.get("VirtualService", "default", "bad").isPresent()
                && hosts(store.get("VirtualService", "default", "flaky").orElseThrow()).equals(List.of("flaky2.example.com")));
        assertEquals(3, store.list("VirtualService", null).size());
    }

    @Test
    void aCrdInstalledLaterIsPickedUp() throws Exception {
        startStore(); // no Istio CRDs yet: synced, nothing watched
        assertEquals(List.of(), store.watching());
        assertThrows(ConfigStoreException.ReadOnly.class, () -> store.create(
                Config.of(SCHEMAS.forKind("VirtualService").orElseThrow().gvk(), "default", "early",
                        spec("early.example.com"))));

        api.installIstioCrds();
        await("VirtualService watched", () -> store.watching().contains("networking.istio.io/v1/virtualservices"));
        api.apply(vs("late", "late.example.com"));
        ConfigEvent e = nextEvent();
        assertEquals("late", e.current().name());
        await("synced again", store::hasSynced);
    }

    @Test
    void writesGoToTheApiServerAndAStaleOneGetsItsConflict() throws Exception {
        api.installIstioCrds();
        startStore();
        var gvk = SCHEMAS.forKind("VirtualService").orElseThrow().gvk();
        Config created = store.create(Config.of(gvk, "default", "written",
                spec("w.example.com")));
        assertFalse(created.resourceVersion().isEmpty());
        assertEquals(created, store.get("VirtualService", "default", "written").orElseThrow(), "served at once");
        assertEquals(ConfigEvent.Type.ADD, nextEvent().type());

        // it is in the API server: a second client sees it
        try (KubeClient other = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
             CrdConfigStore second = new CrdConfigStore(other, SCHEMAS, new ConfigParser(SCHEMAS))) {
            second.run();
            other.runAndWait(Duration.ofSeconds(20));
            await("second store sees the write", () -> second.get("VirtualService", "default", "written").isPresent());
            assertEquals(created.resourceVersion(),
                    second.get("VirtualService", "default", "written").orElseThrow().resourceVersion());
        }

        Config updated = store.update(created.withSpec(spec("w2.example.com")));
        assertNotEquals(created.resourceVersion(), updated.resourceVersion());
        ConfigStoreException.Conflict stale = assertThrows(ConfigStoreException.Conflict.class, () -> store.update(
                created.withSpec(spec("w3.example.com"))));
        assertTrue(stale.getMessage().contains(created.resourceVersion()), stale.getMessage());
        assertThrows(ConfigStoreException.AlreadyExists.class, () -> store.create(created.withResourceVersion("")));
        assertThrows(ConfigStoreException.Conflict.class,
                () -> store.delete("VirtualService", "default", "written", created.resourceVersion()));
        assertThrows(ConfigStoreException.NotFound.class,
                () -> store.delete("VirtualService", "default", "never-written", ""));
        assertThrows(ConfigStoreException.Invalid.class, () -> store.create(Config.of(gvk, "default", "invalid",
                spec("d.example.com", "d.example.com"))));
        // a read-modify-write that loses a race reads the API server's version and applies again
        api.apply(vs("written", "someone-else.example.com"));
        Config patched = store.patch("VirtualService", "default", "written", c -> c.withLabels(Map.of("patched", "yes")));
        assertEquals(List.of("someone-else.example.com"), hosts(patched), "the change of the other writer is kept");
        assertEquals("yes", patched.labels().get("patched"));
        updated = patched;

        // status goes through the status subresource; the spec stays as it is
        Struct status = Struct.newBuilder().putFields("observedGeneration",
                Value.newBuilder().setNumberValue(2).build()).build();
        Config withStatus = store.updateStatus(updated.withStatus(status).withSpec(spec("ignored.example.com")));
        assertEquals(status, withStatus.status());
        assertEquals(List.of("someone-else.example.com"), hosts(withStatus));
        assertTrue(api.get("networking.istio.io/v1", "VirtualService", "default", "written").orElseThrow()
                .getAsJsonObject("status").has("observedGeneration"));

        store.delete("VirtualService", "default", "written", withStatus.resourceVersion());
        await("deleted", () -> store.get("VirtualService", "default", "written").isEmpty());
    }

    /** Lists (not watches) of VirtualServices the API server answered so far. */
    long virtualServiceLists() {
        return api.requestLog().stream().filter(r -> r.startsWith("GET /apis/networking.istio.io/v1/virtualservices")
                && !r.contains("watch=true") && r.endsWith("-> 200")).count();
    }

    @Test
    void afterExpiredVersionsAndAnApiServerRestartTheStoreRelistsAndConverges() throws Exception {
        api.installIstioCrds();
        api.apply(vs("kept", "kept.example.com"));
        api.apply(vs("removed-while-down", "gone.example.com"));
        startStore();
        await("both served", () -> store.list("VirtualService", null).size() == 2);

        // every resourceVersion the informers saw expires: their watches get 410 Gone and list again
        long listsBefore = virtualServiceLists();
        api.compact();
        api.apply(vs("after-compaction", "c.example.com"));
        await("the change after the compaction", () -> store.get("VirtualService", "default", "after-compaction").isPresent());
        await("a new list after 410 Gone", () -> virtualServiceLists() > listsBefore);

        // the API server goes away mid-watch; what was read stays served; changes made while it
        // was down (here: straight into its storage) arrive once it is back
        api.stop();
        assertEquals(3, store.list("VirtualService", null).size(), "last good state kept while the API server is down");
        api.delete("networking.istio.io/v1", "VirtualService", "default", "removed-while-down");
        api.apply(vs("kept", "kept2.example.com"));
        api.restart();
        await("converged", () -> store.get("VirtualService", "default", "removed-while-down").isEmpty()
                && hosts(store.get("VirtualService", "default", "kept").orElseThrow()).equals(List.of("kept2.example.com")));
        await("synced", store::hasSynced);
        assertEquals(List.of(), client.notSynced());
    }

    /** The resourceVersion of VirtualService default/{@code name} as the API server holds it. */
    String versionInCluster(String name) {
        return api.get("networking.istio.io/v1", "VirtualService", "default", name).orElseThrow()
                .getAsJsonObject("metadata").get("resourceVersion").getAsString();
    }

    boolean servesHosts(String name, String... hosts) {
        return store.get("VirtualService", "default", name).map(c -> hosts(c).equals(List.of(hosts))).orElse(false);
    }

    /**
     * Restarts the stand-in with its resourceVersions reset and waits until the informers watch
     * again. A change made before then could be skipped by a watch resumed from the number it saw
     * last (a number that now lies ahead), as on a real API server: not what these tests are about.
     */
    void restartWithResetVersions() throws InterruptedException {
        int watching = api.openWatches();
        api.restartWithResetVersions();
        await("the informers watching again", () -> api.openWatches() >= watching);
    }

    /**
     * resourceVersions are opaque (only equality means anything, and only within one history):
     * after a rebuild or an etcd restore the API server hands out lower numbers. Every change is
     * served all the same.
     */
    @Test
    void afterTheApiServerComesBackWithItsResourceVersionsResetEveryChangeIsServed() throws Exception {
        api.installIstioCrds();
        for (int i = 0; i < 30; i++) {
            api.apply(vs("reviews", "v" + i + ".example.com"));
        }
        startStore();
        await("the last version served", () -> servesHosts("reviews", "v29.example.com"));
        String beforeReset = store.get("VirtualService", "default", "reviews").orElseThrow().resourceVersion();

        restartWithResetVersions();
        // the informer listed from the version it saw last, which lies ahead of the server now, then
        // afresh; waited for, since the open watches counted may still include ones of before the restart
        // the relist follows the informer's watch backoff, which stretches on a loaded machine
        Await.until("a relist answered 504", Duration.ofSeconds(60), () -> api.requestLog().stream().anyMatch(
                r -> r.startsWith("GET /apis/networking.istio.io/v1/virtualservices?") && r.endsWith("-> 504")));
        api.apply(vs("reviews", "lower.example.com"));
        assertTrue(Long.parseLong(versionInCluster("reviews")) < Long.parseLong(beforeReset),
                "the premise: the change has a lower number (" + versionInCluster("reviews") + ") than the one served ("
                        + beforeReset + ")");
        await("the change with the lower resourceVersion served", () -> servesHosts("reviews", "lower.example.com"));
        String served = store.get("VirtualService", "default", "reviews").orElseThrow().resourceVersion();
        assertEquals(versionInCluster("reviews"), served);

        api.apply(vs("added-after-reset", "new.example.com"));
        await("an object created after the reset served", () -> servesHosts("added-after-reset", "new.example.com"));
        assertEquals(List.of(), store.errors());
    }

    /**
     * A REST write is served with the API server's answer at once, unless the watch has already
     * brought a change made after it: the answer must not take that back.
     */
    @Test
    void aWritesAnswerDoesNotTakeBackALaterChangeTheWatchAlreadyServed() throws Exception {
        api.installIstioCrds();
        api.apply(vs("raced", "first.example.com"));
        startStore();
        await("served", () -> servesHosts("raced", "first.example.com"));
        AtomicBoolean raced = new AtomicBoolean();
        api.beforeWriteAnswer(() -> {
            if (raced.compareAndSet(false, true)) {
                // a second writer's change, stored after ours and watched before our answer arrives
                api.apply(vs("raced", "second-writer.example.com"));
                try {
                    await("the second writer's change served", () -> servesHosts("raced", "second-writer.example.com"));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        Config current = store.get("VirtualService", "default", "raced").orElseThrow();
        Config mine = store.update(current.withSpec(spec("mine.example.com")));
        api.beforeWriteAnswer(null);
        assertTrue(raced.get());
        assertEquals(List.of("mine.example.com"), hosts(mine), "the answer is what was written");
        assertTrue(servesHosts("raced", "second-writer.example.com"), "the later change stays served: "
                + store.get("VirtualService", "default", "raced"));
        assertEquals(versionInCluster("raced"), store.get("VirtualService", "default", "raced").orElseThrow()
                .resourceVersion());
    }

    /**
     * A create's answer must not bring back an object the watch has seen created and deleted
     * meanwhile. The watch's create and delete may reach the reconcile as one key (nothing
     * served, no event) or one after the other (ADD, then DELETE): the wait is for the informer
     * to have had the delete, and for the store not to serve the object.
     */
    @Test
    void aCreatesAnswerDoesNotBringBackAnObjectDeletedMeanwhile() throws Exception {
        api.installIstioCrds();
        startStore();
        AtomicBoolean raced = new AtomicBoolean();
        long deletesBefore = KindInformer.CFG_EVENTS.value("VirtualService", "delete");
        api.beforeWriteAnswer(() -> {
            if (raced.compareAndSet(false, true)) {
                api.delete("networking.istio.io/v1", "VirtualService", "default", "short-lived");
                try {
                    await("the delete watched", () -> KindInformer.CFG_EVENTS.value("VirtualService", "delete") > deletesBefore
                            && store.get("VirtualService", "default", "short-lived").isEmpty());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        });
        var gvk = SCHEMAS.forKind("VirtualService").orElseThrow().gvk();
        Config created = store.create(Config.of(gvk, "default", "short-lived", spec("short.example.com")));
        api.beforeWriteAnswer(null);
        assertTrue(raced.get());
        assertEquals(List.of("short.example.com"), hosts(created), "the answer is what was written");
        assertEquals(Optional.empty(), store.get("VirtualService", "default", "short-lived"), "deleted in the cluster");
    }

    // ---- discovery selectors (ENABLE_ENHANCED_RESOURCE_SCOPING)

    static final LabelSelector MESH_ON = new LabelSelector(Map.of("mesh", "on"), List.of());

    static String namespace(String name, String labels) {
        return "apiVersion: v1\nkind: Namespace\nmetadata: {name: %s, labels: {%s}}\n".formatted(name, labels);
    }

    static String vsIn(String namespace, String name, String host) {
        return vs(name, host).replace("namespace: default", "namespace: " + namespace);
    }

    /** The store over the stand-in, scoped by the client's discovery namespace filter. */
    void startScopedStore(List<LabelSelector> selectors) throws Exception {
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        client.discoveryNamespaces().setSelectors(selectors);
        store = new CrdConfigStore(client, SCHEMAS, new ConfigParser(SCHEMAS), client.discoveryNamespaces());
        SCHEMAS.all().forEach(s -> store.registerEventHandler(s.kind(), events::add));
        store.run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        await("store synced", store::hasSynced);
    }

    boolean served(String namespace, String name) {
        return store.get("VirtualService", namespace, name).isPresent();
    }

    /** The next event about {@code namespace/name}, skipping others. */
    ConfigEvent nextEventFor(String namespace, String name) throws InterruptedException {
        while (true) {
            ConfigEvent e = nextEvent();
            Config c = e.current() != null ? e.current() : e.old();
            if (c.namespace().equals(namespace) && c.name().equals(name)) {
                return e;
            }
        }
    }

    @Test
    void objectsOfNamespacesTheDiscoverySelectorsDoNotSelectAreNotServedUntilTheNamespaceIsLabelled() throws Exception {
        api.installIstioCrds();
        api.apply(namespace("in", "mesh: \"on\""));
        api.apply(namespace("out", "team: a"));
        api.apply(vsIn("in", "route", "in.example.com"));
        api.apply(vsIn("out", "route", "out.example.com"));
        startScopedStore(List.of(MESH_ON));
        await("the selected namespace's object", () -> served("in", "route"));
        assertTrue(store.awaitEventsDelivered(20, TimeUnit.SECONDS));
        assertFalse(served("out", "route"), "namespace out is not selected");
        assertEquals(List.of("in"), store.list("VirtualService", null).stream().map(Config::namespace).toList());

        // a change to an object in an unselected namespace is not served either
        api.apply(vsIn("out", "route", "out2.example.com"));
        api.apply(vsIn("in", "marker", "marker.example.com")); // watched after it, through the same stream order
        nextEventFor("in", "marker");
        assertFalse(served("out", "route"));

        // the namespace gets the label: its objects are added, with events
        api.apply(namespace("out", "team: a, mesh: \"on\""));
        ConfigEvent added = nextEventFor("out", "route");
        assertEquals(ConfigEvent.Type.ADD, added.type());
        assertEquals(List.of("out2.example.com"), hosts(store.get("VirtualService", "out", "route").orElseThrow()));

        // the label goes: its objects are removed, with events
        api.apply(namespace("out", "team: a"));
        ConfigEvent removed = nextEventFor("out", "route");
        assertEquals(ConfigEvent.Type.DELETE, removed.type());
        assertFalse(served("out", "route"));
        assertTrue(served("in", "route"), "the selected namespace keeps its objects");
    }

    @Test
    void changingTheDiscoverySelectorsReevaluatesEveryNamespace() throws Exception {
        api.installIstioCrds();
        api.apply(namespace("in", "mesh: \"on\""));
        api.apply(namespace("out", "team: a"));
        api.apply(vsIn("in", "route", "in.example.com"));
        api.apply(vsIn("out", "route", "out.example.com"));
        startScopedStore(List.of(MESH_ON));
        await("the selected namespace's object", () -> served("in", "route"));

        // selectors removed: every namespace is used
        client.discoveryNamespaces().setSelectors(List.of());
        assertEquals(ConfigEvent.Type.ADD, nextEventFor("out", "route").type());
        assertTrue(served("in", "route") && served("out", "route"));

        // selectors by another label: namespace in leaves, out stays
        client.discoveryNamespaces().setSelectors(List.of(new LabelSelector(Map.of(), List.of(
                new LabelSelector.Requirement("team", "In", Set.of("a", "b"))))));
        assertEquals(ConfigEvent.Type.DELETE, nextEventFor("in", "route").type());
        assertFalse(served("in", "route"));
        assertTrue(served("out", "route"));
    }

    @Test
    void withoutTheFilterEveryNamespaceIsServed() throws Exception {
        api.installIstioCrds();
        api.apply(namespace("out", "team: a"));
        api.apply(vsIn("out", "route", "out.example.com"));
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        client.discoveryNamespaces().setSelectors(List.of(MESH_ON)); // the registry's business only
        store = new CrdConfigStore(client, SCHEMAS, new ConfigParser(SCHEMAS));
        store.run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        await("the object of the unselected namespace", () -> served("out", "route"));
    }
}
