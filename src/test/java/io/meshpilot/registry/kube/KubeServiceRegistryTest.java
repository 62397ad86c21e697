package io.meshpilot.registry.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.mesh.v1alpha1.LabelSelector;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.Environment;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.registry.RecordingUpdates;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Kubernetes registry as bootstrap wires it (ServiceRegistries with the ServiceEntry
 * registry beside it), reading a stand-in API server over real HTTP through client-java's
 * informers. What it reports goes to {@link RecordingUpdates}: the real endpoint index behind
 * the interface the DiscoveryServer implements, recording which updates would push what.
 */
class KubeServiceRegistryTest {
    static final String REVIEWS = "reviews.shop.svc.cluster.local";
    static final String RATINGS = "ratings.shop.svc.cluster.local";

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient client;
    MemoryConfigStore store;
    RecordingUpdates updates;
    Environment env;
    ServiceRegistries registries;
    KubeServiceRegistry kube;

    void start(MeshConfig mesh) throws Exception {
        start(mesh, PilotFeatures.Registry.DEFAULTS);
    }

    void start(MeshConfig mesh, PilotFeatures.Registry features) throws Exception {
        api = FakeApiServer.start();
        api.apply(NAMESPACES + NODES);
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        store = new MemoryConfigStore("test", Schemas.PILOT.all(), true);
        updates = new RecordingUpdates();
        env = new Environment("cluster.local", "Kubernetes");
        env.setMesh(mesh);
        registries = new ServiceRegistries(new ServiceRegistries.Options(List.of("Kubernetes"), "Kubernetes",
                "istio-system", features, client), store, updates, env, new Readiness());
        kube = registries.kubernetes();
        store.run();
        registries.configSynced();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        await("registry synced", kube::hasSynced);
    }

    void start() throws Exception {
        start(MeshConfig.newBuilder().setTrustDomain("example.org").build());
    }

    @AfterEach
    void stop() throws Exception {
        if (registries != null) {
            registries.close();
        }
        if (client != null) {
            client.close();
        }
        if (store != null) {
            store.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    /** Applies YAML to the API server and waits until the registry has handled what it caused. */
    void apply(String yaml) throws Exception {
        api.apply(yaml);
    }

    void settle() throws InterruptedException {
        assertTrue(kube.awaitIdle(Duration.ofSeconds(10)));
    }

    List<IstioEndpoint> indexed(String host) {
        EndpointIndex.Shards shards = updates.index.shards(host, "shop");
        return shards == null ? List.of() : shards.all().stream()
                .sorted(Comparator.comparing(IstioEndpoint::address).thenComparing(IstioEndpoint::servicePortName))
                .toList();
    }

    static final String NAMESPACES = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: shop, labels: {istio-discovery: enabled}}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: other}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: istio-system, labels: {topology.istio.io/network: net-main}}
            ---
            """;

    static final String NODES = """
            apiVersion: v1
            kind: Node
            metadata:
              name: node-a
              labels: {topology.kubernetes.io/region: us-east1, topology.kubernetes.io/zone: us-east1-b, topology.istio.io/subzone: rack1}
            ---
            apiVersion: v1
            kind: Node
            metadata:
              name: node-b
              labels: {topology.kubernetes.io/region: us-east1, topology.kubernetes.io/zone: us-east1-c}
            ---
            """;

    static String pod(String name, String ns, String app, String version, String ip, String node, String extraLabels) {
        return """
                apiVersion: v1
                kind: Pod
                metadata:
                  name: %s
                  namespace: %s
                  labels: {app: %s, version: %s%s}
                spec:
                  nodeName: %s
                  serviceAccountName: bookinfo-%s
                  containers:
                  - name: app
                    image: %s
                    ports: [{name: http, containerPort: 9080}]
                status:
                  phase: Running
                  podIP: %s
                  podIPs: [{ip: %s}]
                  conditions: [{type: Ready, status: "True"}]
                ---
                """.formatted(name, ns, app, version, extraLabels, node, app, app, ip, ip);
    }

    static String service(String name, String ns, String ports) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %s, namespace: %s, labels: {app: %s}}
                spec:
                  clusterIP: 10.96.0.%d
                  clusterIPs: [10.96.0.%d]
                  selector: {app: %s}
                  ports: %s
                ---
                """.formatted(name, ns, name, Math.abs(name.hashCode() % 200) + 2, Math.abs(name.hashCode() % 200) + 2,
                name, ports.isEmpty() ? "[{name: http, port: 9080, targetPort: 9080}]" : ports);
    }

    /** A slice as Kubernetes' EndpointSlice controller writes it, one endpoint per (ip, pod, ready). */
    static String slice(String name, String service, String... endpoints) {
        StringBuilder eps = new StringBuilder();
        for (String e : endpoints) {
            String[] p = e.split(",");
            eps.append("- addresses: [").append(p[0]).append("]\n  conditions: {ready: ").append(p[2])
                    .append(", serving: ").append(p[2]).append(", terminating: false}\n")
                    .append("  targetRef: {kind: Pod, name: ").append(p[1]).append(", namespace: shop}\n");
        }
        return """
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata:
                  name: %s
                  namespace: shop
                  labels: {kubernetes.io/service-name: %s}
                addressType: IPv4
                ports: [{name: http, port: 9080, protocol: TCP}]
                endpoints:
                %s
                ---
                """.formatted(name, service, eps.toString().stripTrailing());
    }

    static final String REVIEWS_PODS = pod("reviews-v1-abc", "shop", "reviews", "v1", "10.1.0.11", "node-a",
            ", security.istio.io/tlsMode: istio") + pod("reviews-v2-def", "shop", "reviews", "v2", "10.1.0.12", "node-b",
            ", topology.istio.io/network: net-b");

    @Test
    void serviceSliceAndPodsBecomeServiceAndEndpointsWithLocalityAndIdentity() throws Exception {
        start();
        apply(REVIEWS_PODS + service("reviews", "shop", "")
                + slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true", "10.1.0.12,reviews-v2-def,true"));
        // the slice's, the Service's and the Pods' informers deliver in any order
        await("two reviews endpoints, the service and the pods", () -> indexed(REVIEWS).size() == 2
                && kube.service(REVIEWS).isPresent() && kube.podByIp("10.1.0.12", "shop").isPresent());
        Service svc = kube.service(REVIEWS).orElseThrow();
        assertEquals(Resolution.CLIENT_SIDE_LB, svc.resolution());
        assertEquals("Kubernetes", svc.registry());
        assertTrue(registries.aggregate().service(REVIEWS).isPresent(), "the aggregate serves it");
        List<IstioEndpoint> eps = indexed(REVIEWS);
        IstioEndpoint v1 = eps.get(0);
        assertEquals("10.1.0.11", v1.address());
        assertEquals(9080, v1.endpointPort());
        assertEquals("http", v1.servicePortName());
        assertEquals("spiffe://example.org/ns/shop/sa/bookinfo-reviews", v1.serviceAccount());
        assertEquals(new Locality("us-east1", "us-east1-b", "rack1"), v1.locality());
        assertEquals(IstioEndpoint.TLS_ISTIO, v1.tlsMode());
        assertEquals("net-main", v1.network(), "the system namespace's network");
        assertEquals("v1", v1.labels().get("version"));
        IstioEndpoint v2 = eps.get(1);
        assertEquals(new Locality("us-east1", "us-east1-c", ""), v2.locality());
        assertEquals(IstioEndpoint.TLS_DISABLED, v2.tlsMode());
        assertEquals("net-b", v2.network(), "the pod's own network label");
        assertEquals(2, registries.aggregate().instances(svc, 9080, Map.of()).size());
        assertEquals(1, registries.aggregate().instances(svc, 9080, Map.of("version", "v2")).size());
        assertEquals("reviews-v2-def", kube.podByIp("10.1.0.12", "shop").orElseThrow().name(),
                "a proxy's pod by its IP");
    }

    @Test
    void sliceChangeIsAnEdsUpdateAndServiceChangeAServiceUpdate() throws Exception {
        start();
        apply(REVIEWS_PODS + service("reviews", "shop", "")
                + slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true", "10.1.0.12,reviews-v2-def,true"));
        // the Service's informer may deliver after the slice's: its update must come before the
        // ones taken here, or it lands among the next step's
        await("two reviews endpoints and the service", () -> indexed(REVIEWS).size() == 2
                && kube.service(REVIEWS).isPresent());
        settle();
        updates.take();

        apply(slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true"));
        await("one reviews endpoint", () -> indexed(REVIEWS).size() == 1);
        settle();
        assertEquals(List.of("eds-incremental " + REVIEWS), updates.take(),
                "deleting one endpoint is one incremental EDS update and nothing else");

        apply(service("reviews", "shop", "[{name: http, port: 9080}, {name: grpc, port: 7070}]"));
        await("two ports", () -> kube.service(REVIEWS).orElseThrow().ports().size() == 2);
        settle();
        assertEquals(List.of("svc " + REVIEWS), updates.take(), "a Service change is a service update only");
    }

    @Test
    void notReadyEndpointsAreKeptAsUnhealthyAndPodsArrivingLateComplete() throws Exception {
        start();
        apply(service("ratings", "shop", "")
                + slice("ratings-1", "ratings", "10.1.0.21,ratings-v1-aaa,true", "10.1.0.22,ratings-v1-bbb,false"));
        settle();
        assertEquals(List.of(), indexed(RATINGS), "no endpoint before its pod is known");
        apply(pod("ratings-v1-aaa", "shop", "ratings", "v1", "10.1.0.21", "node-a", "")
                + pod("ratings-v1-bbb", "shop", "ratings", "v1", "10.1.0.22", "node-b", ""));
        await("both ratings endpoints", () -> indexed(RATINGS).size() == 2);
        List<IstioEndpoint> eps = indexed(RATINGS);
        assertEquals("spiffe://example.org/ns/shop/sa/bookinfo-ratings", eps.get(0).serviceAccount());
        assertEquals(IstioEndpoint.HealthStatus.HEALTHY, eps.get(0).health());
        assertEquals(IstioEndpoint.HealthStatus.UNHEALTHY, eps.get(1).health());
        assertFalse(eps.get(1).sentToProxies(), "PILOT_SEND_UNHEALTHY_ENDPOINTS is off by default");
    }

    /** The three switches the other way: unhealthy endpoints sent, no selection across registries. */
    @Test
    void switchesOff() throws Exception {
        start(MeshConfig.newBuilder().setTrustDomain("example.org").build(),
                new PilotFeatures.Registry(true, false, false));
        apply(service("reviews", "shop", "") + pod("details-v1-xyz", "shop", "details", "v1", "10.1.0.31", "node-a", "")
                + pod("reviews-v1-abc", "shop", "reviews", "v1", "10.1.0.11", "node-a", "")
                + slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,false"));
        create("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: details-se, namespace: shop}
                spec:
                  hosts: [details.mesh.example]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 80, name: http}]
                  workloadSelector: {labels: {app: details}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: reviews-vm, namespace: shop}
                spec: {address: 192.168.50.5, labels: {app: reviews}}
                """);
        await("the not-ready reviews endpoint", () -> indexed(REVIEWS).size() == 1);
        settle();
        IstioEndpoint e = indexed(REVIEWS).get(0);
        assertEquals("10.1.0.11", e.address(), "the WorkloadEntry is not selected by the Service");
        assertEquals(IstioEndpoint.HealthStatus.UNHEALTHY, e.health());
        assertTrue(e.sentToProxies(), "PILOT_SEND_UNHEALTHY_ENDPOINTS=true");
        assertEquals(List.of(), indexed("details.mesh.example"), "the ServiceEntry selects no pod");
    }

    /** Acceptance 5: a ServiceEntry selecting Pods and a Service selecting WorkloadEntries both produce endpoints. */
    @Test
    void serviceEntrySelectsPodsAndServiceSelectsWorkloadEntries() throws Exception {
        start();
        apply(service("reviews", "shop", "") + pod("details-v1-xyz", "shop", "details", "v1", "10.1.0.31", "node-a",
                ""));
        create("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: details-se, namespace: shop}
                spec:
                  hosts: [details.mesh.example]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 80, name: http, targetPort: 8000}]
                  workloadSelector: {labels: {app: details}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: reviews-vm, namespace: shop}
                spec: {address: 192.168.50.5, labels: {app: reviews, version: vm}, serviceAccount: reviews-vm}
                """);
        await("the ServiceEntry's pod endpoint", () -> indexed("details.mesh.example").size() == 1);
        IstioEndpoint pod = indexed("details.mesh.example").get(0);
        assertEquals("10.1.0.31", pod.address());
        assertEquals(9080, pod.endpointPort(), "the pod's container port named like the ServiceEntry port");
        assertEquals("spiffe://example.org/ns/shop/sa/bookinfo-details", pod.serviceAccount());

        await("the Service's WorkloadEntry endpoint", () -> indexed(REVIEWS).size() == 1);
        IstioEndpoint vm = indexed(REVIEWS).get(0);
        assertEquals("192.168.50.5", vm.address());
        assertEquals(9080, vm.endpointPort(), "the Service's targetPort");
        assertEquals("http", vm.servicePortName());
        assertEquals("spiffe://example.org/ns/shop/sa/reviews-vm", vm.serviceAccount());

        // and both ways back: the pod stops being ready, the WorkloadEntry goes
        apply(pod("details-v1-xyz", "shop", "details", "v1", "10.1.0.31", "node-a", "").replace("\"True\"",
                "\"False\""));
        await("the pod left the ServiceEntry", () -> indexed("details.mesh.example").isEmpty());
        store.delete("WorkloadEntry", "shop", "reviews-vm", "");
        await("the WorkloadEntry left the Service", () -> indexed(REVIEWS).isEmpty());
    }

    @Test
    void discoverySelectorsLeaveOtherNamespacesOut() throws Exception {
        start(MeshConfig.newBuilder().setTrustDomain("cluster.local").addDiscoverySelectors(
                LabelSelector.newBuilder().putMatchLabels("istio-discovery", "enabled")).build());
        apply(service("reviews", "shop", "") + service("billing", "other", ""));
        await("reviews", () -> kube.service(REVIEWS).isPresent());
        settle();
        assertTrue(kube.service("billing.other.svc.cluster.local").isEmpty(), "namespace other is not selected");

        apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: other, labels: {istio-discovery: enabled}}
                """);
        await("billing once other is labelled", () -> kube.service("billing.other.svc.cluster.local").isPresent());

        env.setMesh(MeshConfig.newBuilder().setTrustDomain("cluster.local").addDiscoverySelectors(
                LabelSelector.newBuilder().putMatchLabels("team", "none")).build());
        await("nothing once the selectors select nothing", () -> kube.services().isEmpty());
        updates.take();
        env.setMesh(MeshConfig.newBuilder().setTrustDomain("cluster.local").build());
        await("everything without selectors", () -> kube.services().size() == 2);
    }

    /**
     * Objects this client cannot fully read (fields missing that it requires, a field of a
     * newer Kubernetes): converted as far as they go, the rest served. client-java's own
     * validation would fail the informer's whole list for one such object.
     */
    @Test
    void malformedObjectsDoNotStopTheRest() throws Exception {
        start();
        apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: broken, namespace: shop}
                spec:
                  ports: [{name: http}, {name: grpc, port: 7070}]
                ---
                apiVersion: discovery.k8s.io/v1
                kind: EndpointSlice
                metadata: {name: broken-1, namespace: shop, labels: {kubernetes.io/service-name: broken}}
                addressType: IPv4
                ports: [{name: grpc}]
                endpoints: [{conditions: {ready: true}}, {addresses: [10.9.9.9]}]
                ---
                apiVersion: v1
                kind: Pod
                metadata: {name: odd, namespace: shop, labels: {app: reviews}}
                spec:
                  containers: [{name: c, image: c, ports: [{name: http}]}]
                  fieldOfANewerKubernetes: {enabled: true}
                status: {phase: Running, podIP: 10.1.0.99, conditions: [{type: Ready, status: "True"}]}
                ---
                """ + REVIEWS_PODS + service("reviews", "shop", "")
                + slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true"));
        await("reviews", () -> indexed(REVIEWS).size() == 1);
        Service broken = kube.service("broken.shop.svc.cluster.local").orElseThrow();
        assertEquals(List.of(7070), broken.ports().stream().map(Port::port).toList());
        await("the address without a pod", () -> indexed("broken.shop.svc.cluster.local").size() == 1);
        assertEquals("10.9.9.9", indexed("broken.shop.svc.cluster.local").get(0).address());
        assertTrue(kube.podByIp("10.1.0.99", "shop").isPresent(), "a pod with an unnumbered port is still a workload");
    }

    /**
     * The API server goes away; what changed meanwhile is in history it no longer has (410
     * Gone): the last state stays served while it is down, and after it is back the informers
     * list again and the registry converges, deletions included.
     */
    @Test
    void apiServerDownThenCompactedConverges() throws Exception {
        start();
        String ratingsPod = pod("ratings-v1-aaa", "shop", "ratings", "v1", "10.1.0.21", "node-a", "");
        apply(REVIEWS_PODS + ratingsPod + service("reviews", "shop", "") + service("ratings", "shop", "")
                + slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true", "10.1.0.12,reviews-v2-def,true")
                + slice("ratings-1", "ratings", "10.1.0.21,ratings-v1-aaa,true"));
        await("both services", () -> indexed(REVIEWS).size() == 2 && indexed(RATINGS).size() == 1);

        api.stop();
        api.apply(slice("reviews-1", "reviews", "10.1.0.11,reviews-v1-abc,true"));
        api.delete(service("ratings", "shop", ""));
        api.compact();
        Thread.sleep(300); // the informers notice the server is gone and retry
        assertTrue(kube.service(RATINGS).isPresent(), "the last state stays served while the API server is down");
        assertEquals(2, indexed(REVIEWS).size());

        api.restart();
        await("converged: one reviews endpoint, no ratings", () -> indexed(REVIEWS).size() == 1
                && kube.service(RATINGS).isEmpty());
        assertEquals("10.1.0.11", indexed(REVIEWS).get(0).address());
    }

    /** A LoadBalancer Service in shop with {@code labels}, {@code ports} and {@code status.loadBalancer.ingress}. */
    static String loadBalancer(String name, String labels, String ports, String ingress) {
        return """
                apiVersion: v1
                kind: Service
                metadata: {name: %s, namespace: shop, labels: {%s}}
                spec: {type: LoadBalancer, clusterIP: 10.96.1.1, ports: [%s]}
                status: {loadBalancer: {ingress: [%s]}}
                ---
                """.formatted(name, labels, ports, ingress);
    }

    /**
     * istiod's gateway discovery: a Service labelled with a network is its gateway on 15443 (or
     * its gatewayPort label's port) at its load balancer's and external addresses (a hostname as
     * it is: the discovery server resolves it); one without that port is logged; a meshNetworks change makes a Service named
     * by registryServiceName a gateway; each change is one gateways update, deletion included.
     */
    @Test
    void servicesLabelledWithANetworkOrNamedByMeshNetworksAreItsGateways() throws Exception {
        start();
        try (CapturedLog log = new CapturedLog(ServiceGateways.class)) {
            apply(loadBalancer("ew", "topology.istio.io/network: net2", "{name: tls, port: 15443}",
                    "{ip: 192.0.2.10}")
                    + loadBalancer("ew-custom", "topology.istio.io/network: net3, networking.istio.io/gatewayPort: \"16443\"",
                    "{name: tls, port: 16443}", "{ip: 192.0.2.20}")
                    + loadBalancer("ew-noport", "topology.istio.io/network: net4", "{name: http, port: 80}",
                    "{ip: 192.0.2.30}")
                    + loadBalancer("ew-named", "topology.istio.io/network: net5", "{name: tls, port: 15443}",
                    "{hostname: ew.example.com}")
                    + loadBalancer("plain", "app: plain", "{name: tls, port: 15443}", "{ip: 192.0.2.40}"));
            await("three gateways", () -> kube.networkGateways().size() == 3);
            settle();
            assertEquals(List.of(new NetworkGateway("net2", "Kubernetes", "192.0.2.10", 15443),
                    new NetworkGateway("net3", "Kubernetes", "192.0.2.20", 16443),
                    new NetworkGateway("net5", "Kubernetes", "ew.example.com", 15443)), sortedGateways());
            assertTrue(log.has("WARNING", "Service shop/ew-noport", "network net4", "no port 15443",
                    "not used as a gateway"), log.lines().toString());
            assertTrue(updates.take().contains("gateways"));

            env.setNetworks(new MeshConfigLoader().parseNetworks("meshNetworks", """
                    networks:
                      net6:
                        endpoints: [{fromRegistry: Kubernetes}]
                        gateways: [{registryServiceName: plain.shop.svc.cluster.local, port: 15443}]
                    """));
            await("the Service meshNetworks names", () -> sortedGateways().contains(
                    new NetworkGateway("net6", "Kubernetes", "192.0.2.40", 15443)));
            settle();
            assertTrue(updates.take().contains("gateways"));

            api.delete("v1", "Service", "shop", "ew");
            await("ew's gateway gone", () -> sortedGateways().stream().noneMatch(g -> g.network().equals("net2")));
            settle();
            assertTrue(updates.take().contains("gateways"));
        }
    }

    List<NetworkGateway> sortedGateways() {
        return kube.networkGateways().stream().sorted(NetworkGateway.ORDER).toList();
    }

    void create(String yaml) throws Exception {
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("test.yaml", yaml);
        assertEquals(List.of(), r.errors());
        for (Config c : r.configs()) {
            store.create(c);
        }
        assertTrue(store.awaitEventsDelivered(10, TimeUnit.SECONDS));
    }
}
