package io.meshpilot.registry.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.util.JsonFormat;
import io.kubernetes.client.openapi.models.V1EndpointConditions;
import io.kubernetes.client.openapi.models.V1EndpointSlice;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.util.Yaml;
import io.meshpilot.api.mesh.v1alpha1.LabelSelector;
import io.meshpilot.api.mesh.v1alpha1.LabelSelectorRequirement;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.kube.DiscoveryNamespaces;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.IstioEndpoint.HealthStatus;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.TrafficDistribution;
import java.io.IOException;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The conversions of the Kubernetes registry, table by table, from client-java's own model
 * objects (read from YAML as the API server would send them): Services, EndpointSlice
 * conditions, Pod and Node metadata, discovery selectors.
 */
class KubeConversionTest {
    static final String TD = "cluster.local";

    static <T> T load(String yaml, Class<T> type) {
        try {
            return type.cast(Yaml.load(yaml));
        } catch (IOException e) {
            throw new IllegalArgumentException(e);
        }
    }

    static V1Service service(String spec) {
        return service("", spec);
    }

    static V1Service service(String annotations, String spec) {
        return load("""
                apiVersion: v1
                kind: Service
                metadata:
                  name: reviews
                  namespace: shop
                  labels: {app: reviews}
                  creationTimestamp: "2026-01-02T03:04:05Z"
                %s
                spec:
                %s
                """.formatted(annotations.indent(2), spec.indent(2)), V1Service.class);
    }

    static Service convert(V1Service s) {
        return KubeServiceConversion.service(s, "cluster.local", "Kubernetes", "Kubernetes", null);
    }

    @Test
    void clusterIpServiceIsClientSideWithItsVipHostnameAndPorts() {
        Service s = convert(service("""
                type: ClusterIP
                clusterIP: 10.96.0.10
                clusterIPs: [10.96.0.10]
                selector: {app: reviews}
                ports:
                - {name: http, port: 9080, targetPort: 9080}
                - {name: tcp-db, port: 5432}
                """));
        assertEquals("reviews.shop.svc.cluster.local", s.hostname());
        assertEquals("shop", s.namespace());
        assertEquals("10.96.0.10", s.defaultAddress());
        assertEquals(Map.of("Kubernetes", List.of("10.96.0.10")), s.clusterVips());
        assertEquals(Resolution.CLIENT_SIDE_LB, s.resolution());
        assertFalse(s.meshExternal());
        assertEquals("Kubernetes", s.registry());
        assertEquals(Map.of("app", "reviews"), s.labels());
        assertEquals(Instant.parse("2026-01-02T03:04:05Z"), s.creationTime());
        assertEquals(List.of(new Port("http", 9080, Protocol.HTTP),
                new Port("tcp-db", 5432, Protocol.TCP)), s.ports());
        assertEquals(Set.of(), s.exportTo());
    }

    @Test
    void dualStackServiceHasBothClusterIps() {
        Service s = convert(service("""
                clusterIP: 10.96.0.10
                clusterIPs: [10.96.0.10, "fd00::a"]
                ipFamilies: [IPv4, IPv6]
                ports: [{name: http, port: 80}]
                """));
        assertEquals("10.96.0.10", s.defaultAddress());
        assertEquals(Map.of("Kubernetes", List.of("10.96.0.10", "fd00::a")), s.clusterVips());
    }

    @Test
    void headlessServiceIsPassthroughWithoutVip() {
        Service s = convert(service("""
                clusterIP: None
                selector: {app: db}
                ports: [{name: tcp, port: 5432}]
                """));
        assertEquals(Resolution.PASSTHROUGH, s.resolution());
        assertEquals(Service.UNSPECIFIED_IP, s.defaultAddress());
        assertEquals(Map.of(), s.clusterVips());
    }

    @Test
    void externalNameServiceIsMeshExternalDnsWithTheNameAsEndpoint() {
        V1Service k8s = service("""
                type: ExternalName
                externalName: db.example.com
                ports: [{name: tcp, port: 5432}]
                """);
        Service s = convert(k8s);
        assertEquals(Resolution.DNS_LB, s.resolution());
        assertTrue(s.meshExternal());
        List<IstioEndpoint> eps = KubeServiceConversion.externalNameEndpoints(k8s, s);
        assertEquals(1, eps.size());
        assertEquals("db.example.com", eps.get(0).address());
        assertEquals(5432, eps.get(0).endpointPort());
        assertEquals("tcp", eps.get(0).servicePortName());
    }

    @Test
    void exportToAnnotationIsTheVisibility() {
        Service s = convert(service("""
                annotations: {networking.istio.io/exportTo: ". , istio-system"}
                """, "ports: [{name: http, port: 80}]"));
        assertEquals(Set.of(".", "istio-system"), s.exportTo());
    }

    /** istiod's kube ConvertProtocol: appProtocol (whatever it says) before the name; UDP; well-known ports. */
    @ParameterizedTest(name = "{0} appProtocol={1} port={2} {3} -> {4}")
    @CsvSource(nullValues = "-", value = {
            "http-web, -, 80, TCP, HTTP",
            "grpc, -, 80, TCP, GRPC",
            "grpc-web-x, -, 80, TCP, GRPC_WEB",
            "GRPC-Web, -, 80, TCP, GRPC_WEB",
            "tcp-db, -, 80, TCP, TCP",
            "web, -, 80, TCP, UNSUPPORTED",
            "mysql-main, -, 3306, TCP, MYSQL",
            "db, -, 3306, TCP, TCP",
            "dns, -, 53, UDP, UDP",
            "http, -, 80, UDP, UDP",
            "web, http2, 80, TCP, HTTP2",
            "http, grpc, 80, TCP, GRPC",
            "http, custom.io/thing, 80, TCP, UNSUPPORTED",
            "tcp, kubernetes.io/h2c, 80, TCP, HTTP2",
            "tcp, kubernetes.io/ws, 80, TCP, HTTP",
            "tcp, kubernetes.io/wss, 80, TCP, HTTPS",
            "-, -, 27017, TCP, TCP",
    })
    void protocol(String name, String appProtocol, int port, String transport, Protocol expected) {
        V1ServicePort p = new V1ServicePort().name(name).appProtocol(appProtocol).port(port).protocol(transport);
        assertEquals(expected, KubeServiceConversion.protocol(p));
    }

    @ParameterizedTest(name = "spec={0} svc={1} ns={2} -> {3}")
    @CsvSource(nullValues = "-", value = {
            "-, -, -, ANY",
            "PreferClose, -, -, PREFER_SAME_ZONE",
            "PreferSameZone, -, -, PREFER_SAME_ZONE",
            "PreferSameNode, -, -, PREFER_SAME_NODE",
            "-, preferclose, -, PREFER_SAME_ZONE",
            "-, -, PreferSameNode, PREFER_SAME_NODE",
            "-, bogus, PreferClose, ANY",
            "PreferSameNode, PreferClose, -, PREFER_SAME_NODE",
    })
    void trafficDistribution(String spec, String annotation, String nsAnnotation,
                             TrafficDistribution expected) {
        V1Service s = service(annotation == null ? ""
                        : "annotations: {networking.istio.io/traffic-distribution: " + annotation + "}",
                "ports: [{name: http, port: 80}]" + (spec == null ? "" : "\ntrafficDistribution: " + spec));
        Map<String, String> ns = nsAnnotation == null ? Map.of()
                : Map.of(KubeServiceConversion.TRAFFIC_DISTRIBUTION_ANNOTATION, nsAnnotation);
        assertEquals(expected, KubeServiceConversion.service(s, "cluster.local", "Kubernetes", "Kubernetes", ns)
                .trafficDistribution());
    }

    // ---- EndpointSlices ------------------------------------------------------------------

    /** istiod's endpointHealthStatus, and whether EDS sends the endpoint (send-unhealthy off, then on). */
    @ParameterizedTest(name = "ready={0} serving={1} terminating={2} -> {3}")
    @CsvSource(nullValues = "-", value = {
            "-, -, -, HEALTHY, true, true",
            "true, -, -, HEALTHY, true, true",
            "true, true, false, HEALTHY, true, true",
            "false, -, -, TERMINATING, false, false",
            "false, true, true, TERMINATING, false, false",
            "false, false, true, TERMINATING, false, false",
            "false, false, false, UNHEALTHY, false, true",
            "false, true, false, UNHEALTHY, false, true",
    })
    void endpointConditions(Boolean ready, Boolean serving, Boolean terminating, HealthStatus expected,
                            boolean sent, boolean sentWhenUnhealthyAreSent) {
        V1EndpointConditions c = new V1EndpointConditions().ready(ready).serving(serving).terminating(terminating);
        HealthStatus h = EndpointSliceConversion.health(c);
        assertEquals(expected, h);
        IstioEndpoint e = new IstioEndpoint("10.0.0.1", 80, "http", Map.of(), "", "", Locality.NONE, "", 0, h, "",
                "shop", false);
        IstioEndpoint withUnhealthy = new IstioEndpoint("10.0.0.1", 80, "http", Map.of(), "", "", Locality.NONE, "",
                0, h, "", "shop", true);
        assertEquals(sent, e.sentToProxies());
        assertEquals(sentWhenUnhealthyAreSent, withUnhealthy.sentToProxies());
    }

    static final String SLICE = """
            apiVersion: discovery.k8s.io/v1
            kind: EndpointSlice
            metadata:
              name: reviews-abc12
              namespace: shop
              labels: {kubernetes.io/service-name: reviews}
            addressType: IPv4
            ports:
            - {name: http, port: 9080, protocol: TCP}
            - {name: tcp-metrics, port: 15090, protocol: TCP}
            endpoints:
            - addresses: [10.1.0.5]
              conditions: {ready: true}
              targetRef: {kind: Pod, name: reviews-v1-5d8f-abcde, namespace: shop}
            - addresses: [10.1.0.6]
              conditions: {ready: false, serving: false, terminating: false}
              targetRef: {kind: Pod, name: reviews-v2-7f9c-fghij, namespace: shop}
            - addresses: [10.1.0.7]
              conditions: {ready: true}
              targetRef: {kind: Pod, name: not-seen-yet, namespace: shop}
            - addresses: [192.168.7.7]
            """;

    @Test
    void sliceEndpointsPerAddressAndPortWithPodMetadataAndWaitingPods() {
        V1EndpointSlice slice = load(SLICE, V1EndpointSlice.class);
        assertEquals("reviews", EndpointSliceConversion.serviceName(slice));
        IstioEndpoint podPart = new IstioEndpoint("", 0, "", Map.of("app", "reviews"),
                "spiffe://cluster.local/ns/shop/sa/bookinfo-reviews", "net1", new Locality("r", "z", ""),
                IstioEndpoint.TLS_ISTIO, 0, HealthStatus.HEALTHY, "reviews-v1", "shop");
        IstioEndpoint bare = new IstioEndpoint("", 0, "", Map.of(), "", "", Locality.NONE, IstioEndpoint.TLS_DISABLED,
                0, HealthStatus.HEALTHY, "", "");
        EndpointSliceConversion.Result r = EndpointSliceConversion.endpoints(slice, (ip, ref) -> {
            if (ref == null) {
                return new EndpointSliceConversion.PodLookup.None(bare);
            }
            return ref.getName().equals("not-seen-yet") ? new EndpointSliceConversion.PodLookup.Missing()
                    : new EndpointSliceConversion.PodLookup.Found(podPart);
        }, false);
        assertEquals(List.of("10.1.0.7"), r.waitingForPods());
        assertEquals(6, r.endpoints().size(), r.endpoints().toString());
        IstioEndpoint first = r.endpoints().get(0);
        assertEquals("10.1.0.5", first.address());
        assertEquals(9080, first.endpointPort());
        assertEquals("http", first.servicePortName());
        assertEquals("spiffe://cluster.local/ns/shop/sa/bookinfo-reviews", first.serviceAccount());
        assertEquals(new Locality("r", "z", ""), first.locality());
        assertEquals(HealthStatus.HEALTHY, first.health());
        assertEquals("tcp-metrics", r.endpoints().get(1).servicePortName());
        assertEquals(HealthStatus.UNHEALTHY, r.endpoints().get(2).health());
        IstioEndpoint manual = r.endpoints().get(4);
        assertEquals("192.168.7.7", manual.address());
        assertEquals("", manual.serviceAccount());
        assertEquals("shop", manual.namespace(), "an endpoint without a pod is in the slice's namespace");
    }

    @Test
    void fqdnSlicesAndMulticlusterSlicesAreNotConverted() {
        V1EndpointSlice fqdn = load(SLICE.replace("addressType: IPv4", "addressType: FQDN"), V1EndpointSlice.class);
        assertEquals(List.of(), EndpointSliceConversion.endpoints(fqdn,
                (ip, ref) -> new EndpointSliceConversion.PodLookup.Missing(), false).endpoints());
        V1EndpointSlice mcs = load(SLICE.replace("labels: {kubernetes.io/service-name: reviews}",
                "labels: {kubernetes.io/service-name: reviews, multicluster.kubernetes.io/service-name: reviews}"),
                V1EndpointSlice.class);
        assertEquals("", EndpointSliceConversion.serviceName(mcs));
    }

    // ---- Pods and Nodes ------------------------------------------------------------------

    static V1Pod pod(String labels, String extraSpec) {
        return load("""
                apiVersion: v1
                kind: Pod
                metadata:
                  name: reviews-v1-5d8f9c7b6-abcde
                  generateName: reviews-v1-5d8f9c7b6-
                  namespace: shop
                  labels: {%s}
                  ownerReferences:
                  - {apiVersion: apps/v1, kind: ReplicaSet, name: reviews-v1-5d8f9c7b6, uid: u1, controller: true}
                spec:
                  nodeName: node-a
                  serviceAccountName: bookinfo-reviews
                  containers:
                  - name: app
                    image: reviews
                    ports:
                    - {name: http, containerPort: 9080}
                    - {name: dns, containerPort: 53, protocol: UDP}
                %s
                status:
                  phase: Running
                  podIP: 10.1.0.5
                  conditions: [{type: Ready, status: "True"}]
                """.formatted(labels, extraSpec.indent(2)), V1Pod.class);
    }

    static final V1Node NODE = load("""
            apiVersion: v1
            kind: Node
            metadata:
              name: node-a
              labels:
                topology.kubernetes.io/region: us-east1
                topology.kubernetes.io/zone: us-east1-b
                topology.istio.io/subzone: rack7
            """, V1Node.class);

    @Test
    void podGivesLabelsIdentityNetworkTlsModeLocalityAndWorkloadName() {
        V1Pod p = pod("app: reviews, version: v1, pod-template-hash: 5d8f9c7b6, security.istio.io/tlsMode: istio, "
                + "topology.istio.io/network: net-a", "");
        IstioEndpoint t = PodConversion.template(p, NODE, "example.org", "c1", "net-default");
        assertEquals("spiffe://example.org/ns/shop/sa/bookinfo-reviews", t.serviceAccount());
        assertEquals(IstioEndpoint.TLS_ISTIO, t.tlsMode());
        assertEquals("net-a", t.network(), "the pod's network label wins over the system namespace's");
        assertEquals(new Locality("us-east1", "us-east1-b", "rack7"), t.locality());
        assertEquals("reviews-v1", t.workloadName(), "a ReplicaSet's pod belongs to its Deployment");
        assertEquals("shop", t.namespace());
        assertEquals("v1", t.labels().get("version"));
        // istiod's AugmentLabels
        assertEquals("us-east1", t.labels().get("topology.kubernetes.io/region"));
        assertEquals("us-east1-b", t.labels().get("topology.kubernetes.io/zone"));
        assertEquals("rack7", t.labels().get("topology.istio.io/subzone"));
        assertEquals("c1", t.labels().get("topology.istio.io/cluster"));
        assertEquals("node-a", t.labels().get("kubernetes.io/hostname"));
        assertEquals(Map.of("http", 9080), PodConversion.portMap(p), "named TCP ports only");
        assertTrue(PodConversion.readyWithIp(p));
    }

    @Test
    void podWithoutLabelsFallsBackToDefaults() {
        V1Pod p = pod("app: reviews", "");
        p.getMetadata().setOwnerReferences(null);
        p.getSpec().setServiceAccountName(null);
        IstioEndpoint t = PodConversion.template(p, null, "cluster.local", "c1", "net-default");
        assertEquals("spiffe://cluster.local/ns/shop/sa/default", t.serviceAccount());
        assertEquals(IstioEndpoint.TLS_DISABLED, t.tlsMode());
        assertEquals("net-default", t.network());
        assertEquals("net-default", t.labels().get("topology.istio.io/network"));
        assertEquals(Locality.NONE, t.locality(), "no node known");
        assertEquals("reviews-v1-5d8f9c7b6-abcde", t.workloadName());
    }

    @Test
    void istioLocalityLabelWinsOverTheNode() {
        V1Pod p = pod("app: reviews, istio-locality: eu.eu-1a.r2", "");
        assertEquals(new Locality("eu", "eu-1a", "r2"), PodConversion.template(p, NODE, TD, "c1", "").locality());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: z1 | r1/z1",
            "failure-domain.beta.kubernetes.io/region: r1, failure-domain.beta.kubernetes.io/zone: z1 | r1/z1",
            "topology.kubernetes.io/region: r1, failure-domain.beta.kubernetes.io/region: old | r1",
            "topology.kubernetes.io/region: r1, topology.kubernetes.io/zone: z1, topology.istio.io/subzone: s1 | r1/z1/s1",
            "kubernetes.io/hostname: n | ''",
    })
    void nodeLocality(String labels, String expected) {
        V1Node n = load("apiVersion: v1\nkind: Node\nmetadata: {name: n, labels: {" + labels + "}}\n", V1Node.class);
        assertEquals(expected, PodConversion.nodeLocality(n).toString());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "phase: Running, podIP: 10.1.0.5, conditions: [{type: Ready, status: 'True'}] | true",
            "phase: Running, podIP: 10.1.0.5, conditions: [{type: Ready, status: 'False'}] | false",
            "phase: Pending, conditions: [{type: Ready, status: 'True'}] | false",
            "phase: Succeeded, podIP: 10.1.0.5, conditions: [{type: Ready, status: 'True'}] | false",
            "phase: Running, podIP: 10.1.0.5 | false",
    })
    void podReadiness(String status, boolean expected) {
        V1Pod p = pod("app: a", "");
        p.setStatus(load("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nstatus: {" + status + "}\n", V1Pod.class)
                .getStatus());
        assertEquals(expected, PodConversion.readyWithIp(p));
    }

    @Test
    void namedTargetPortsOfServicesSelectingWorkloadEntries() {
        V1Service s = service("""
                ports:
                - {name: http, port: 80, targetPort: 8080}
                - {name: grpc, port: 90, targetPort: grpc-port}
                """);
        Service svc = convert(s);
        assertEquals(new KubeServiceConversion.TargetPort(8080, "http", false),
                KubeServiceConversion.targetPort(s, svc.ports().get(0)));
        assertEquals(new KubeServiceConversion.TargetPort(90, "grpc-port", true),
                KubeServiceConversion.targetPort(s, svc.ports().get(1)));
    }

    // ---- discovery selectors ---------------------------------------------------------------

    @Test
    void discoverySelectorsSelectNamespacesByLabels() {
        assertTrue(DiscoveryNamespaces.ALL.selects(Map.of()), "no selectors: every namespace");
        DiscoveryNamespaces d = new DiscoveryNamespaces(DiscoverySelectors.of(List.of(
                LabelSelector.newBuilder().putMatchLabels("mesh", "on").build(),
                LabelSelector.newBuilder().addMatchExpressions(LabelSelectorRequirement.newBuilder()
                        .setKey("team").setOperator("In").addValues("a").addValues("b")).addMatchExpressions(
                        LabelSelectorRequirement.newBuilder().setKey("legacy").setOperator("DoesNotExist")).build())));
        assertTrue(d.selects(Map.of("mesh", "on")));
        assertTrue(d.selects(Map.of("team", "b")));
        assertFalse(d.selects(Map.of("team", "b", "legacy", "")));
        assertFalse(d.selects(Map.of("mesh", "off", "team", "c")));
        assertFalse(d.selects(null));
    }

    @Test
    void meshNetworksGiveTheNetworkByRegistryOrCidr() throws Exception {
        MeshNetworks.Builder nets = MeshNetworks.newBuilder();
        JsonFormat.parser().merge("""
                {"networks": {
                  "net-a": {"endpoints": [{"fromCidr": "10.1.0.0/16"}, {"fromCidr": "fd00:1::/64"}]},
                  "net-b": {"endpoints": [{"fromCidr": "10.2.3.0/25"}, {"fromCidr": "not-a-cidr"}]},
                  "net-c": {"endpoints": [{"fromRegistry": "other-cluster"}]}}}
                """, nets);
        MeshNetworkRanges r = MeshNetworkRanges.of(nets.build(), "Kubernetes");
        assertEquals("net-a", r.network("10.1.200.7"));
        assertEquals("net-a", r.network("fd00:1::5"));
        assertEquals("net-b", r.network("10.2.3.127"));
        assertEquals("", r.network("10.2.3.128"), "outside the /25");
        assertEquals("", r.network("192.168.0.1"));
        assertEquals("", r.network("db.example.com"));
        assertEquals("net-c", MeshNetworkRanges.of(nets.build(), "other-cluster").network("10.1.0.1"),
                "fromRegistry holds every endpoint of that cluster");
    }

}
