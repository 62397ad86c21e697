package io.meshpilot.registry;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import io.meshpilot.testing.Await;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The ServiceEntry registry over a real validating config store, events and all. */
class ServiceEntryRegistryTest {
    MemoryConfigStore store;
    RecordingUpdates updates;
    ServiceEntryRegistry registry;
    final ConfigParser parser = new ConfigParser(Schemas.PILOT);

    @BeforeEach
    void setUp() {
        store = new MemoryConfigStore("test", Schemas.PILOT.all(), true);
        updates = new RecordingUpdates();
        registry = new ServiceEntryRegistry(store, updates, () -> "cluster.local", "Kubernetes");
        for (String kind : List.of("ServiceEntry", "WorkloadEntry", "WorkloadGroup")) {
            store.registerEventHandler(kind, registry::onConfigEvent);
        }
        store.run();
    }

    @AfterEach
    void tearDown() {
        store.close();
    }

    /** Applies YAML documents to the store (create or replace) and waits until the registry saw them. */
    void apply(String yaml) throws Exception {
        ConfigParser.Result r = parser.parse("test.yaml", yaml);
        assertEquals(List.of(), r.errors());
        for (Config c : r.configs()) {
            if (store.get(c.gvk().kind(), c.namespace(), c.name()).isPresent()) {
                store.update(c);
            } else {
                store.create(c);
            }
        }
        assertTrue(store.awaitEventsDelivered(10, TimeUnit.SECONDS));
    }

    void delete(String kind, String ns, String name) throws Exception {
        store.delete(kind, ns, name, "");
        assertTrue(store.awaitEventsDelivered(10, TimeUnit.SECONDS));
    }

    static String se(String name, String host, String extra) {
        return """
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: %s, namespace: shop}
                spec:
                  hosts: [%s]
                  location: MESH_INTERNAL
                  ports: [{number: 8080, name: http-web, protocol: HTTP, targetPort: 9090}, {number: 5432, name: tcp-db}]
                %s
                """.formatted(name, host, extra);
    }

    static String we(String name, String ns, String labels, String extra) {
        return """
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: %s, namespace: %s}
                spec:
                  address: 10.0.0.%d
                  labels: %s
                %s
                """.formatted(name, ns, Math.abs(name.hashCode() % 250) + 1, labels, extra);
    }

    List<IstioEndpoint> endpoints(String host) {
        var shards = updates.index.shards(host, "shop");
        return shards == null ? List.of() : shards.all();
    }

    @Test
    void serviceEntryPicksUpExistingWorkloadsAndNewWorkloadsJoin() throws Exception {
        apply(we("w1", "shop", "{app: web, version: v1}", "  serviceAccount: web\n  locality: eu/eu-1/a"));
        apply(se("web", "web.shop.example", "  resolution: STATIC\n  workloadSelector: {labels: {app: web}}"));
        Service s = registry.service("web.shop.example").orElseThrow();
        assertEquals(Resolution.CLIENT_SIDE_LB, s.resolution());
        assertEquals(Protocol.HTTP, s.port(8080).orElseThrow().protocol());
        assertEquals(Protocol.TCP, s.port(5432).orElseThrow().protocol(), "protocol from the port name prefix");
        List<IstioEndpoint> eps = endpoints("web.shop.example");
        assertEquals(2, eps.size(), "one endpoint per service port");
        IstioEndpoint http = eps.stream().filter(e -> e.servicePortName().equals("http-web")).findFirst().orElseThrow();
        assertEquals(9090, http.endpointPort(), "targetPort");
        assertEquals("spiffe://cluster.local/ns/shop/sa/web", http.serviceAccount());
        assertEquals(IstioEndpoint.TLS_ISTIO, http.tlsMode(), "a service account means a sidecar with an identity");
        assertEquals("eu/eu-1/a", http.locality().toString());
        updates.take();

        // the reverse direction: a new workload joins, as one incremental EDS update
        apply(we("w2", "shop", "{app: web, version: v2}", "  serviceAccount: web\n  ports: {http-web: 7000}"));
        assertEquals(List.of("eds-incremental web.shop.example"), updates.take());
        assertEquals(4, endpoints("web.shop.example").size());
        assertTrue(endpoints("web.shop.example").stream().anyMatch(e -> e.endpointPort() == 7000), "WorkloadEntry port map");
        assertEquals(1, registry.instances(registry.service("web.shop.example").orElseThrow(), 8080,
                Map.of("version", "v2")).size());

        // a label change that leaves the selector: incremental; a new identity: full (istiod pushes fully then)
        apply(we("w2", "shop", "{app: other}", "  serviceAccount: web"));
        assertEquals(List.of("eds-incremental web.shop.example"), updates.take());
        apply(we("w1", "shop", "{app: web, version: v1}", "  serviceAccount: web-v2\n  locality: eu/eu-1/a"));
        assertEquals(List.of("eds-full web.shop.example"), updates.take());

        // a new targetPort only moves endpoints: incremental, as in istiod
        apply(se("web", "web.shop.example", "  resolution: STATIC\n  workloadSelector: {labels: {app: web}}")
                .replace("targetPort: 9090", "targetPort: 9091"));
        assertEquals(List.of("eds-incremental web.shop.example"), updates.take());
        assertTrue(endpoints("web.shop.example").stream().anyMatch(e -> e.endpointPort() == 9091));

        // changing the entry's ports is a service change: one full push, no separate EDS push
        apply(se("web", "web.shop.example", "  resolution: STATIC\n  workloadSelector: {labels: {app: web}}")
                .replace("number: 8080", "number: 8081").replace("targetPort: 9090", "targetPort: 9091"));
        assertEquals(List.of("svc web.shop.example"), updates.take());
        assertTrue(registry.service("web.shop.example").orElseThrow().port(8081).isPresent());

        delete("ServiceEntry", "shop", "web");
        assertEquals(List.of("svcdelete web.shop.example"), updates.take());
        assertTrue(registry.service("web.shop.example").isEmpty());
        assertEquals(List.of(), endpoints("web.shop.example"));
    }

    /**
     * istiod's endpoint builder asks the ambient index whether an endpoint takes HBONE (SupportsTunnel),
     * and the index marks a WorkloadEntry, or a ServiceEntry's inline endpoint, HBONE when the entry
     * is annotated as captured by ztunnel (workloads.go setTunnelProtocol): the same mark reaches EDS.
     */
    @Test
    void entriesZtunnelCapturesAreMarkedForHbone() throws Exception {
        apply(we("vm1", "shop", "{app: vm}", "").replace("metadata: {name: vm1, namespace: shop}",
                "metadata: {name: vm1, namespace: shop, annotations: {ambient.istio.io/redirection: enabled}}"));
        apply(we("vm2", "shop", "{app: vm}", ""));
        apply(se("vms", "vm.shop.example", "  resolution: STATIC\n  workloadSelector: {labels: {app: vm}}"));
        apply(se("inline", "inline.shop.example", "  resolution: STATIC\n  endpoints: [{address: 10.2.0.1}]")
                .replace("metadata: {name: inline, namespace: shop}",
                        "metadata: {name: inline, namespace: shop, annotations: {ambient.istio.io/redirection: enabled}}"));
        Await.until("the endpoints", Duration.ofSeconds(10), () -> endpoints("vm.shop.example").size() == 4
                && endpoints("inline.shop.example").size() == 2);
        assertEquals(Set.of("10.0.0." + (Math.abs("vm1".hashCode() % 250) + 1) + "=http"),
                endpoints("vm.shop.example").stream().filter(e -> e.labels().containsKey(IstioEndpoint.TUNNEL_LABEL))
                        .map(e -> e.address() + "=" + e.labels().get(IstioEndpoint.TUNNEL_LABEL)).collect(Collectors.toSet()),
                "only the captured entry takes HBONE");
        assertTrue(endpoints("inline.shop.example").stream().allMatch(e -> IstioEndpoint.TUNNEL_HTTP.equals(
                e.labels().get(IstioEndpoint.TUNNEL_LABEL))), "an annotated ServiceEntry's inline endpoints");
    }

    @Test
    void danglingReferencesWarnAndNeverCrash() throws Exception {
        // a selector matching nothing
        apply(se("lonely", "lonely.example", "  resolution: STATIC\n  workloadSelector: {labels: {app: nobody}}"));
        assertTrue(registry.service("lonely.example").isPresent());
        assertEquals(List.of(), endpoints("lonely.example"));
        // STATIC without endpoints or selector
        apply(se("empty", "empty.example", "  resolution: STATIC"));
        assertEquals(List.of(), endpoints("empty.example"));
        // a matching workload in another namespace is not selected
        apply(we("elsewhere", "other", "{app: nobody}", ""));
        assertEquals(List.of(), endpoints("lonely.example"));
        // deleting what does not exist, twice
        apply(we("gone", "shop", "{app: nobody}", ""));
        assertEquals(2, endpoints("lonely.example").size());
        delete("WorkloadEntry", "shop", "gone");
        assertEquals(List.of(), endpoints("lonely.example"));
        registry.onConfigEvent(new ConfigEvent(ConfigEvent.Type.DELETE,
                Config.of(new GroupVersionKind("networking.istio.io", "v1", "WorkloadEntry"), "shop", "gone",
                        WorkloadEntry.getDefaultInstance()), null));
        assertEquals(List.of(), endpoints("lonely.example"));
    }

    @Test
    void dnsResolutionInlineEndpointsAndAutomaticAddresses() throws Exception {
        apply(se("ext", "api.example.com", "  resolution: DNS").replace("MESH_INTERNAL", "MESH_EXTERNAL"));
        updates.take();
        Service ext = registry.service("api.example.com").orElseThrow();
        assertTrue(ext.meshExternal());
        assertEquals(Resolution.DNS_LB, ext.resolution());
        List<IstioEndpoint> eps = endpoints("api.example.com");
        assertEquals(List.of("api.example.com", "api.example.com"), eps.stream().map(IstioEndpoint::address).toList(),
                "DNS without endpoints: the proxy resolves the host");
        assertTrue(ext.autoAllocatedIpv4().startsWith("240.240."), ext.autoAllocatedIpv4());
        String first = ext.autoAllocatedIpv4();

        apply(se("inline", "db.example.com", """
                  resolution: STATIC
                  addresses: [192.0.2.10]
                  endpoints:
                  - {address: 192.0.2.11, labels: {role: primary}, ports: {tcp-db: 6432}, weight: 3}
                  - {address: 192.0.2.12, labels: {security.istio.io/tlsMode: istio}}
                """));
        Service db = registry.service("db.example.com").orElseThrow();
        assertEquals("192.0.2.10", db.defaultAddress());
        assertEquals("", db.autoAllocatedIpv4(), "entries with an address get none");
        List<IstioEndpoint> dbEps = endpoints("db.example.com");
        assertEquals(4, dbEps.size());
        IstioEndpoint primary = dbEps.stream().filter(e -> e.address().equals("192.0.2.11")
                && e.servicePortName().equals("tcp-db")).findFirst().orElseThrow();
        assertEquals(6432, primary.endpointPort());
        assertEquals(3, primary.lbWeight());
        assertEquals(IstioEndpoint.TLS_DISABLED, primary.tlsMode());
        assertTrue(dbEps.stream().filter(e -> e.address().equals("192.0.2.12"))
                .allMatch(e -> e.tlsMode().equals(IstioEndpoint.TLS_ISTIO)), "the tlsMode label wins");

        apply(se("wild", "\"*.wild.example\"", "  resolution: NONE"));
        assertEquals("", registry.service("*.wild.example").orElseThrow().autoAllocatedIpv4());
        // another service coming and going never moves an allocated address
        apply(se("other", "other.example.com", "  resolution: DNS"));
        delete("ServiceEntry", "shop", "other");
        assertEquals(first, registry.service("api.example.com").orElseThrow().autoAllocatedIpv4());
    }

    @Test
    void severalEntriesForOneHost() throws Exception {
        apply(se("a", "shared.example", "  resolution: STATIC\n  endpoints: [{address: 10.1.0.1}]"));
        apply(se("b", "shared.example", "  resolution: STATIC\n  endpoints: [{address: 10.1.0.2}]"));
        assertEquals(4, endpoints("shared.example").size(), "endpoints of both entries, merged");
        assertEquals("a", registry.service("shared.example").orElseThrow().configKey().name(), "the oldest wins");
        updates.take();
        delete("ServiceEntry", "shop", "a");
        assertEquals("b", registry.service("shared.example").orElseThrow().configKey().name());
        assertEquals(2, endpoints("shared.example").size());
        assertEquals(List.of("svc shared.example"), updates.take(), "the host lives on: an update, not a delete");
        delete("ServiceEntry", "shop", "b");
        assertEquals(List.of("svcdelete shared.example"), updates.take());
    }
}
