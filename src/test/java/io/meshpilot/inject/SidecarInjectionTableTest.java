package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.testing.InjectWebhookCalls;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Pods through the injector: the JSON Patch is applied with a JSON Patch library (Jakarta
 * JSON-P's RFC 6902 implementation, Parsson) and the result is compared with what istiod
 * produces for the same input, in the init containers, containers (args, env, probes,
 * resources, security context, mounts), volumes, annotations and the injected labels. The
 * expected pods are written here from istiod's golden outputs in
 * pkg/kube/inject/testdata/inject (each row names its case; the values are those of istiod's
 * test: hub registry.istio.io/testing, tag latest, otherwise the chart's defaults), and from
 * istiod's injectRequired for the rows that are not injected.
 */
class SidecarInjectionTableTest {
    static final MeshConfig MESH = new MeshConfigLoader().defaults();
    static final InjectionValues ISTIOD_TEST_VALUES = InjectionValues.defaults()
            .with(Map.of("global.hub", "registry.istio.io/testing", "global.tag", "latest"));

    /** One pod through the injector and what istiod makes of it. */
    record Row(String name, JsonObject pod, Consumer<Setup> setup, Consumer<Expected> expect) {
        @Override
        public String toString() {
            return name;
        }
    }

    /** The injector's inputs a row may change. */
    static final class Setup {
        InjectionValues values = ISTIOD_TEST_VALUES;
        InjectorConfig config = InjectorConfig.defaults();
        boolean nativeSidecars = true; // istiod's test nodes run kubelet 1.33+, so "auto" means native
        String revision = "";
        Map<String, String> namespaceLabels;
        String namespace = "default";
        String path = "/inject";
    }

    /** The expected pod, starting from istiod's hello.yaml.injected; a row edits it. */
    static final class Expected {
        boolean injected = true;
        String refusedWith;
        /** Refused because MeshPilot does not render these templates: what the message names. */
        String unrenderedTemplates;
        JsonArray initContainers = new JsonArray();
        JsonArray containers = new JsonArray();
        JsonArray volumes = baseVolumes();
        JsonObject annotations = new JsonObject();
        Map<String, String> labels = new LinkedHashMap<>();

        JsonObject init() {
            return named(initContainers, "istio-init");
        }

        JsonObject proxy() {
            JsonObject p = named(initContainers, "istio-proxy");
            return p != null ? p : named(containers, "istio-proxy");
        }

        void env(String name, String value) {
            JsonArray env = proxy().getAsJsonArray("env");
            JsonObject e = named(env, name);
            if (e == null) {
                env.add(SidecarTemplate.env(name, value));
            } else {
                e.remove("valueFrom");
                e.addProperty("value", value);
            }
        }

        void status(String inits, String containers) {
            annotations.addProperty("sidecar.istio.io/status", "{\"initContainers\":" + inits + ",\"containers\":" + containers
                    + ",\"volumes\":[\"workload-socket\",\"credential-socket\",\"workload-certs\",\"istio-envoy\",\"istio-data\","
                    + "\"istio-podinfo\",\"istio-token\",\"istiod-ca-cert\",\"istio-ca-crl\"],\"imagePullSecrets\":null,"
                    + "\"revision\":\"" + annotations.get("istio.io/rev").getAsString() + "\"}");
        }

        /** istiod's output without native sidecars (its *-old-version.yaml.injected). */
        void classicSidecar() {
            JsonObject proxy = proxy();
            initContainers.remove(proxy);
            proxy.remove("restartPolicy");
            proxy.remove("lifecycle");
            containers.add(proxy);
            status("[\"istio-init\"]", "[\"istio-proxy\"]");
        }

        void skipped() {
            injected = false;
        }
    }

    static JsonObject named(JsonArray a, String name) {
        for (JsonElement e : a) {
            if (e.getAsJsonObject().get("name").getAsString().equals(name)) {
                return e.getAsJsonObject();
            }
        }
        return null;
    }

    static JsonObject json(String s) {
        return JsonParser.parseString(s).getAsJsonObject();
    }

    static JsonArray array(String s) {
        return JsonParser.parseString(s).getAsJsonArray();
    }

    // hello.yaml.injected, istio-init
    static final String INIT = """
            {"name":"istio-init","image":"registry.istio.io/testing/proxyv2:latest",
             "args":["istio-iptables","-p","15001","-z","15006","-u","1337","-m","REDIRECT","-i","*","-x","","-b","*",
                     "-d","15090,15021,15020","--log_output_level=default:info"],
             "resources":{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"100m","memory":"128Mi"}},
             "securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"add":["NET_ADMIN","NET_RAW"],"drop":["ALL"]},
               "privileged":false,"readOnlyRootFilesystem":false,"runAsGroup":0,"runAsNonRoot":false,"runAsUser":0}}
            """;

    // hello.yaml.injected, istio-proxy (a native sidecar)
    static final String PROXY = """
            {"name":"istio-proxy","image":"registry.istio.io/testing/proxyv2:latest",
             "args":["proxy","sidecar","--domain","$(POD_NAMESPACE).svc.cluster.local","--proxyLogLevel=warning",
                     "--proxyComponentLogLevel=misc:error","--log_output_level=default:info"],
             "env":[{"name":"PILOT_CERT_PROVIDER","value":"istiod"},
                    {"name":"CA_ADDR","value":"istiod.istio-system.svc:15012"},
                    {"name":"POD_NAME","valueFrom":{"fieldRef":{"fieldPath":"metadata.name"}}},
                    {"name":"POD_NAMESPACE","valueFrom":{"fieldRef":{"fieldPath":"metadata.namespace"}}},
                    {"name":"INSTANCE_IP","valueFrom":{"fieldRef":{"fieldPath":"status.podIP"}}},
                    {"name":"SERVICE_ACCOUNT","valueFrom":{"fieldRef":{"fieldPath":"spec.serviceAccountName"}}},
                    {"name":"HOST_IP","valueFrom":{"fieldRef":{"fieldPath":"status.hostIP"}}},
                    {"name":"ISTIO_CPU_LIMIT","valueFrom":{"resourceFieldRef":{"divisor":"1","resource":"limits.cpu"}}},
                    {"name":"PROXY_CONFIG","value":"{}\\n"},
                    {"name":"ISTIO_META_POD_PORTS","value":"[\\n    {\\"name\\":\\"http\\",\\"containerPort\\":80}\\n]"},
                    {"name":"ISTIO_META_APP_CONTAINERS","value":"hello"},
                    {"name":"GOMEMLIMIT","valueFrom":{"resourceFieldRef":{"divisor":"1","resource":"limits.memory"}}},
                    {"name":"ISTIO_META_CLUSTER_ID","value":"Kubernetes"},
                    {"name":"ISTIO_META_NODE_NAME","valueFrom":{"fieldRef":{"fieldPath":"spec.nodeName"}}},
                    {"name":"ISTIO_META_INTERCEPTION_MODE","value":"REDIRECT"},
                    {"name":"ISTIO_META_WORKLOAD_NAME","value":"hello"},
                    {"name":"ISTIO_META_OWNER","value":"kubernetes://apis/apps/v1/namespaces/default/deployments/hello"},
                    {"name":"ISTIO_META_MESH_ID","value":"cluster.local"},
                    {"name":"TRUST_DOMAIN","value":"cluster.local"}],
             "lifecycle":{"preStop":{"exec":{"command":["pilot-agent","request","--debug-port=15020","POST","drain"]}}},
             "ports":[{"containerPort":15090,"name":"http-envoy-prom","protocol":"TCP"}],
             "readinessProbe":{"failureThreshold":4,"httpGet":{"path":"/healthz/ready","port":15021},"periodSeconds":15,
                               "timeoutSeconds":3},
             "resources":{"limits":{"cpu":"2","memory":"1Gi"},"requests":{"cpu":"100m","memory":"128Mi"}},
             "restartPolicy":"Always",
             "securityContext":{"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"privileged":false,
               "readOnlyRootFilesystem":true,"runAsGroup":1337,"runAsNonRoot":true,"runAsUser":1337},
             "startupProbe":{"failureThreshold":600,"httpGet":{"path":"/healthz/ready","port":15021},"periodSeconds":1,
                             "timeoutSeconds":3},
             "volumeMounts":[{"mountPath":"/var/run/secrets/workload-spiffe-uds","name":"workload-socket"},
                             {"mountPath":"/var/run/secrets/credential-uds","name":"credential-socket"},
                             {"mountPath":"/var/run/secrets/workload-spiffe-credentials","name":"workload-certs"},
                             {"mountPath":"/var/run/secrets/istio","name":"istiod-ca-cert"},
                             {"mountPath":"/var/run/secrets/istio/crl","name":"istio-ca-crl"},
                             {"mountPath":"/var/lib/istio/data","name":"istio-data"},
                             {"mountPath":"/etc/istio/proxy","name":"istio-envoy"},
                             {"mountPath":"/var/run/secrets/tokens","name":"istio-token"},
                             {"mountPath":"/etc/istio/pod","name":"istio-podinfo"}]}
            """;

    static JsonArray baseVolumes() {
        return array("""
                [{"name":"workload-socket"},{"name":"credential-socket"},{"name":"workload-certs"},
                 {"emptyDir":{"medium":"Memory"},"name":"istio-envoy"},{"emptyDir":{},"name":"istio-data"},
                 {"downwardAPI":{"items":[{"fieldRef":{"fieldPath":"metadata.labels"},"path":"labels"},
                   {"fieldRef":{"fieldPath":"metadata.annotations"},"path":"annotations"}]},"name":"istio-podinfo"},
                 {"name":"istio-token","projected":{"sources":[{"serviceAccountToken":{"audience":"istio-ca",
                   "expirationSeconds":43200,"path":"istio-token"}}]}},
                 {"configMap":{"name":"istio-ca-root-cert"},"name":"istiod-ca-cert"},
                 {"configMap":{"name":"istio-ca-crl","optional":true},"name":"istio-ca-crl"}]
                """);
    }

    /** istiod's hello deployment's pod, as its ReplicaSet creates it. */
    static JsonObject hello() {
        return json("""
                {"apiVersion":"v1","kind":"Pod",
                 "metadata":{"generateName":"hello-7d9f6c5b8-","namespace":"default",
                   "labels":{"app":"hello","tier":"backend","track":"stable","pod-template-hash":"7d9f6c5b8"},
                   "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"hello-7d9f6c5b8",
                     "uid":"0d1c2b3a","controller":true,"blockOwnerDeletion":true}]},
                 "spec":{"containers":[{"name":"hello","image":"fake.docker.io/google-samples/hello-go-gke:1.0",
                   "ports":[{"name":"http","containerPort":80}]}]}}
                """);
    }

    static JsonObject with(JsonObject pod, String field, Map<String, String> values) {
        JsonObject meta = pod.getAsJsonObject("metadata");
        if (!meta.has(field)) {
            meta.add(field, new JsonObject());
        }
        values.forEach(meta.getAsJsonObject(field)::addProperty);
        return pod;
    }

    static Expected baseline(JsonObject pod) {
        Expected x = new Expected();
        x.initContainers.add(json(INIT));
        x.initContainers.add(json(PROXY));
        pod.getAsJsonObject("spec").getAsJsonArray("containers").forEach(c -> x.containers.add(c.deepCopy()));
        x.containers.asList().removeIf(c -> c.getAsJsonObject().get("name").getAsString().equals("istio-proxy"));
        JsonObject given = pod.getAsJsonObject("metadata").getAsJsonObject("annotations");
        if (given != null) {
            given.entrySet().forEach(e -> x.annotations.add(e.getKey(), e.getValue()));
        }
        x.annotations.addProperty("istio.io/rev", "default");
        x.annotations.addProperty("kubectl.kubernetes.io/default-container", "hello");
        x.annotations.addProperty("kubectl.kubernetes.io/default-logs-container", "hello");
        x.annotations.addProperty("prometheus.io/path", "/stats/prometheus");
        x.annotations.addProperty("prometheus.io/port", "15020");
        x.annotations.addProperty("prometheus.io/scrape", "true");
        x.status("[\"istio-init\",\"istio-proxy\"]", "null");
        x.labels.put("security.istio.io/tlsMode", "istio");
        x.labels.put("service.istio.io/canonical-name", "hello");
        x.labels.put("service.istio.io/canonical-revision", "latest");
        return x;
    }

    static Stream<Row> rows() {
        List<Row> rows = new ArrayList<>();
        // hello.yaml -> hello.yaml.injected (native sidecars: ENABLE_NATIVE_SIDECARS auto on 1.33+ nodes)
        rows.add(new Row("default injection, native sidecar", hello(), s -> { }, x -> { }));
        // hello.yaml -> hello-old-version.yaml.injected (ENABLE_NATIVE_SIDECARS=false)
        rows.add(new Row("classic sidecar container", hello(), s -> s.nativeSidecars = false, Expected::classicSidecar));
        // native-sidecar-opt-out.yaml: the pod annotation sidecar.istio.io/nativeSidecar=false wins over the flag
        rows.add(new Row("native sidecar opted out by annotation", with(hello(), "annotations",
                Map.of("sidecar.istio.io/nativeSidecar", "false")), s -> { }, Expected::classicSidecar));
        // hello.yaml -> hello.yaml.cni.injected (components.cni.enabled, values.global.network=network1)
        rows.add(new Row("CNI: istio-validation instead of istio-init", hello(),
                s -> s.values = ISTIOD_TEST_VALUES.with(Map.of("pilot.cni.enabled", true, "global.network", "network1")), x -> {
                    JsonObject init = x.init();
                    init.addProperty("name", "istio-validation");
                    JsonArray args = init.getAsJsonArray("args");
                    args.add("--run-validation");
                    args.add("--skip-rule-apply");
                    init.add("securityContext", json("""
                            {"allowPrivilegeEscalation":false,"capabilities":{"drop":["ALL"]},"privileged":false,
                             "readOnlyRootFilesystem":true,"runAsGroup":1337,"runAsNonRoot":true,"runAsUser":1337}"""));
                    JsonArray env = x.proxy().getAsJsonArray("env");
                    // istiod's updateClusterEnvs moves the network to the end (the golden has it last)
                    env.add(SidecarTemplate.env("ISTIO_META_NETWORK", "network1"));
                    x.annotations.addProperty("sidecar.istio.io/interceptionMode", "REDIRECT");
                    x.annotations.addProperty("traffic.sidecar.istio.io/excludeInboundPorts", "15020");
                    x.annotations.addProperty("traffic.sidecar.istio.io/includeInboundPorts", "*");
                    x.annotations.addProperty("traffic.sidecar.istio.io/includeOutboundIPRanges", "*");
                    x.status("[\"istio-validation\",\"istio-proxy\"]", "null");
                    x.labels.put("topology.istio.io/network", "network1");
                }));
        // istiod's injectRequired: the pod label sidecar.istio.io/inject=false opts out
        rows.add(new Row("opt-out by label", with(hello(), "labels", Map.of("sidecar.istio.io/inject", "false")),
                s -> { }, Expected::skipped));
        // injectRequired: the annotation opts out too
        rows.add(new Row("opt-out by annotation", with(hello(), "annotations", Map.of("sidecar.istio.io/inject", "false")),
                s -> { }, Expected::skipped));
        // injectRequired: the label wins over the annotation
        rows.add(new Row("label true wins over annotation false", with(with(hello(), "labels",
                Map.of("sidecar.istio.io/inject", "true")), "annotations", Map.of("sidecar.istio.io/inject", "false")),
                s -> { }, x -> x.labels.put("sidecar.istio.io/inject", "true")));
        // injectRequired with policy disabled: only pods that opt in
        rows.add(new Row("policy disabled, no opt-in", hello(), s -> s.config = InjectorConfig.parse("policy: disabled"),
                Expected::skipped));
        rows.add(new Row("policy disabled, opt-in by annotation", with(hello(), "annotations",
                Map.of("sidecar.istio.io/inject", "true")), s -> s.config = InjectorConfig.parse("policy: disabled"), x -> { }));
        // injectRequired: neverInjectSelector, then alwaysInjectSelector
        rows.add(new Row("neverInjectSelector matches", hello(), s -> s.config = InjectorConfig.parse("""
                policy: enabled
                neverInjectSelector:
                - matchExpressions:
                  - {key: tier, operator: In, values: [backend]}
                """), Expected::skipped));
        rows.add(new Row("alwaysInjectSelector under policy disabled", hello(), s -> s.config = InjectorConfig.parse("""
                policy: disabled
                alwaysInjectSelector:
                - matchLabels: {track: stable}
                injectedAnnotations:
                  example.com/injected-by: meshpilot
                """), x -> x.annotations.addProperty("example.com/injected-by", "meshpilot")));
        // hello-host-network.yaml: istiod leaves host-network pods alone
        JsonObject hostNetwork = hello();
        hostNetwork.getAsJsonObject("spec").addProperty("hostNetwork", true);
        rows.add(new Row("host network", hostNetwork, s -> { }, Expected::skipped));
        // IgnoredNamespaces
        rows.add(new Row("kube-system is never injected", hello(), s -> s.namespace = "kube-system", Expected::skipped));
        // the default webhook configuration's namespaceSelector: istio-injection=disabled
        rows.add(new Row("namespace istio-injection=disabled", hello(),
                s -> s.namespaceLabels = Map.of("istio-injection", "disabled"), Expected::skipped));
        // revision: the canary control plane's webhook (values.revision=canary) on a namespace labelled istio.io/rev=canary
        rows.add(new Row("revision canary", hello(), s -> {
            s.revision = "canary";
            s.values = ISTIOD_TEST_VALUES.with(Map.of("revision", "canary"));
            s.namespaceLabels = Map.of("istio.io/rev", "canary");
        }, x -> {
            x.annotations.addProperty("istio.io/rev", "canary");
            x.status("[\"istio-init\",\"istio-proxy\"]", "null");
            x.env("CA_ADDR", "istiod-canary.istio-system.svc:15012");
        }));
        rows.add(new Row("another revision's namespace", hello(), s -> {
            s.revision = "canary";
            s.namespaceLabels = Map.of("istio.io/rev", "stable");
        }, Expected::skipped));
        // resource_annotations.yaml -> resource_annotations.yaml.injected
        rows.add(new Row("custom proxy resources", with(hello(), "annotations", Map.of(
                "sidecar.istio.io/proxyCPU", "100m", "sidecar.istio.io/proxyCPULimit", "1000m",
                "sidecar.istio.io/proxyMemory", "1Gi", "sidecar.istio.io/proxyMemoryLimit", "2Gi")), s -> { }, x -> {
                    JsonObject r = json("{\"limits\":{\"cpu\":\"1\",\"memory\":\"2Gi\"},\"requests\":{\"cpu\":\"100m\",\"memory\":\"1Gi\"}}");
                    x.init().add("resources", r.deepCopy());
                    x.proxy().add("resources", r);
                }));
        // traffic-annotations.yaml -> traffic-annotations.yaml.injected (without its proxyCPU annotation)
        rows.add(new Row("traffic annotations and proxy.istio.io/config", with(hello(), "annotations", Map.of(
                "traffic.sidecar.istio.io/includeInboundPorts", "1,2,3",
                "traffic.sidecar.istio.io/excludeInboundPorts", "4,5,6",
                "traffic.sidecar.istio.io/excludeOutboundPorts", "7,8,9",
                "traffic.sidecar.istio.io/includeOutboundIPRanges", "127.0.0.1/24,10.96.0.1/24",
                "traffic.sidecar.istio.io/excludeOutboundIPRanges", "10.96.0.2/24,10.96.0.3/24",
                "proxy.istio.io/config", "discoveryAddress: foo:123\nconcurrency: 0\nproxyMetadata:\n  FOO: bar\n"
                        + "  ISTIO_META_TLS_CLIENT_KEY: /etc/identity2/client/keys/client-key.pem")), s -> { }, x -> {
                    x.init().add("args", array("""
                            ["istio-iptables","-p","15001","-z","15006","-u","1337","-m","REDIRECT",
                             "-i","127.0.0.1/24,10.96.0.1/24","-x","10.96.0.2/24,10.96.0.3/24","-b","1,2,3",
                             "-d","15090,15021,4,5,6,15020","-o","7,8,9","--log_output_level=default:info"]"""));
                    x.init().add("env", array("""
                            [{"name":"FOO","value":"bar"},
                             {"name":"ISTIO_META_TLS_CLIENT_KEY","value":"/etc/identity2/client/keys/client-key.pem"}]"""));
                    x.env("PROXY_CONFIG", "{\"discoveryAddress\":\"foo:123\",\"concurrency\":0,\"proxyMetadata\":{\"FOO\":\"bar\","
                            + "\"ISTIO_META_TLS_CLIENT_KEY\":\"/etc/identity2/client/keys/client-key.pem\"}}\n");
                    x.env("FOO", "bar");
                    x.env("ISTIO_META_TLS_CLIENT_KEY", "/etc/identity2/client/keys/client-key.pem");
                }));
        // hello-tproxy.yaml.injected (interception mode TPROXY, here by the pod annotation)
        rows.add(new Row("TPROXY interception", with(hello(), "annotations",
                Map.of("sidecar.istio.io/interceptionMode", "TPROXY")), s -> { }, x -> {
                    x.init().getAsJsonArray("args").set(8, new JsonPrimitive("TPROXY"));
                    x.env("ISTIO_META_INTERCEPTION_MODE", "TPROXY");
                    x.proxy().add("securityContext", json("""
                            {"allowPrivilegeEscalation":false,"capabilities":{"add":["NET_ADMIN"],"drop":["ALL"]},
                             "privileged":false,"readOnlyRootFilesystem":true,"runAsGroup":1337,"runAsNonRoot":false,
                             "runAsUser":0}"""));
                }));
        // hello-probes.yaml -> hello-probes.yaml.injected
        rows.add(new Row("app probes rewritten to the agent", helloProbes(), s -> { }, x -> {
            x.containers = array("""
                    [{"name":"hello","image":"fake.docker.io/google-samples/hello-go-gke:1.0",
                      "ports":[{"name":"http","containerPort":80}],
                      "livenessProbe":{"httpGet":{"port":15020,"path":"/app-health/hello/livez"}},
                      "readinessProbe":{"httpGet":{"port":15020,"path":"/app-health/hello/readyz"}},
                      "lifecycle":{"preStop":{"httpGet":{"port":15020,"path":"/app-lifecycle/hello/prestopz"}},
                                   "postStart":{"httpGet":{"port":15020,"path":"/app-lifecycle/hello/poststartz"}}}},
                     {"name":"world","image":"fake.docker.io/google-samples/hello-go-gke:1.0",
                      "ports":[{"name":"http","containerPort":90}],
                      "livenessProbe":{"httpGet":{"port":15020,"path":"/app-health/world/livez"}},
                      "readinessProbe":{"exec":{"command":["cat","/tmp/healthy"]}}}]""");
            x.env("ISTIO_META_POD_PORTS", "[\n    {\"name\":\"http\",\"containerPort\":80}\n    ,{\"name\":\"http\",\"containerPort\":90}\n]");
            x.env("ISTIO_META_APP_CONTAINERS", "hello,world");
            x.env("ISTIO_KUBE_APP_PROBERS", "{\"/app-health/hello/livez\":{\"httpGet\":{\"port\":80}},"
                    + "\"/app-health/hello/readyz\":{\"httpGet\":{\"port\":3333}},"
                    + "\"/app-health/world/livez\":{\"httpGet\":{\"port\":90}},"
                    + "\"/app-lifecycle/hello/poststartz\":{\"tcpSocket\":{\"port\":93}},"
                    + "\"/app-lifecycle/hello/prestopz\":{\"httpGet\":{\"port\":91}}}");
        }));
        // hello.yaml -> hello.proxyHoldsApplication.yaml.injected, but with classic sidecars the proxy goes first
        // and waits (istiod's reorderPod and the template's postStart hook)
        rows.add(new Row("holdApplicationUntilProxyStarts, classic sidecar", with(hello(), "annotations",
                Map.of("proxy.istio.io/config", "{ \"holdApplicationUntilProxyStarts\": true }")), s -> s.nativeSidecars = false,
                x -> {
                    x.classicSidecar();
                    JsonObject proxy = x.proxy();
                    proxy.add("lifecycle", json("{\"postStart\":{\"exec\":{\"command\":[\"pilot-agent\",\"wait\"]}}}"));
                    x.env("PROXY_CONFIG", "{\"holdApplicationUntilProxyStarts\":true}\n");
                    x.containers.remove(proxy);
                    x.containers.asList().addFirst(proxy);
                }));
        // a template other than the default sidecar one: refused naming it (MeshPilot's limit), never admitted bare
        rows.add(new Row("custom template asked for", with(hello(), "annotations",
                Map.of("inject.istio.io/templates", "sidecar,custom")), s -> s.config = InjectorConfig.parse("""
                templates:
                  sidecar: "..."
                  custom: "..."
                """), x -> x.unrenderedTemplates = "the injection template \"custom\""));
        // /inject/cluster/<id>/net/<network>: istiod's webhook path parameters set the proxy's cluster and network
        rows.add(new Row("cluster and network from the webhook path", hello(), s -> s.path = "/inject/cluster/east/net/n1",
                x -> {
                    // istiod's updateClusterEnvs: both moved to the end of the env, by name
                    Pods.removeNamed(x.proxy().getAsJsonArray("env"), "ISTIO_META_CLUSTER_ID");
                    x.env("ISTIO_META_CLUSTER_ID", "east");
                    x.env("ISTIO_META_NETWORK", "n1");
                    x.labels.put("topology.istio.io/network", "n1");
                }));
        // proxy-override.yaml -> proxy-override.yaml.injected: the pod's own istio-init and istio-proxy are overrides
        rows.add(new Row("existing istio-proxy and istio-init in the pod", proxyOverride(), s -> { }, x -> {
            x.containers = array("[{\"name\":\"hello\",\"image\":\"fake.docker.io/google-samples/hello-go-gke:1.0\"}]");
            JsonObject init = x.init();
            init.addProperty("image", "fake/custom-image");
            init.add("args", array("[\"my\",\"custom\",\"args\"]"));
            JsonObject proxy = x.proxy();
            x.env("ISTIO_META_POD_PORTS", "[\n]");
            proxy.add("lifecycle", json("{\"preStop\":{\"exec\":{\"command\":[\"sleep\",\"10\"]}}}"));
            proxy.add("livenessProbe", json("""
                    {"failureThreshold":30,"httpGet":{"path":"/healthz/ready","port":15021},"initialDelaySeconds":10,
                     "periodSeconds":2,"timeoutSeconds":3}"""));
            proxy.add("resources", json("{\"limits\":{\"cpu\":\"3\",\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"123m\",\"memory\":\"128Mi\"}}"));
            proxy.add("securityContext", json("""
                    {"allowPrivilegeEscalation":true,"capabilities":{"drop":["ALL"]},"privileged":false,
                     "readOnlyRootFilesystem":false,"runAsGroup":1234,"runAsNonRoot":true,"runAsUser":1234}"""));
            proxy.addProperty("terminationMessagePath", "/foo/bar");
            proxy.addProperty("tty", true);
            proxy.getAsJsonArray("volumeMounts").add(json("{\"mountPath\":\"/etc/certs\",\"name\":\"certs\"}"));
            x.volumes.add(json("{\"name\":\"certs\",\"secret\":{\"secretName\":\"istio-certs\"}}"));
            x.annotations.addProperty("proxy.istio.io/overrides", """
                    {"initContainers":[{"name":"istio-init","image":"fake/custom-image","args":["my","custom","args"],\
                    "resources":{}},{"name":"istio-proxy","resources":{"limits":{"cpu":"3"},"requests":{"cpu":"123m"}},\
                    "volumeMounts":[{"name":"certs","mountPath":"/etc/certs"}],"livenessProbe":{"httpGet":\
                    {"path":"/healthz/ready","port":15021},"initialDelaySeconds":10,"timeoutSeconds":3,"periodSeconds":2,\
                    "failureThreshold":30},"lifecycle":{"preStop":{"exec":{"command":["sleep","10"]}}},\
                    "terminationMessagePath":"/foo/bar","securityContext":{"runAsUser":1234,"runAsGroup":1234,\
                    "readOnlyRootFilesystem":false,"allowPrivilegeEscalation":true},"tty":true}]}""");
        }));
        // traffic-annotations-bad-includeipranges.yaml and friends: istiod refuses the pod, naming the annotation
        rows.add(new Row("malformed traffic annotation refused", with(hello(), "annotations", Map.of(
                "traffic.sidecar.istio.io/includeOutboundIPRanges", "127.0.0.1,10.96.0.1/24",
                "traffic.sidecar.istio.io/excludeInboundPorts", "4,5,a")), s -> { }, x -> x.refusedWith =
                "invalid value '4,5,a' for annotation 'traffic.sidecar.istio.io/excludeInboundPorts'"));
        return rows.stream();
    }

    static JsonObject proxyOverride() {
        JsonObject pod = hello();
        pod.getAsJsonObject("spec").add("initContainers", array("""
                [{"name":"istio-init","args":["my","custom","args"],"image":"fake/custom-image"}]"""));
        pod.getAsJsonObject("spec").add("containers", array("""
                [{"name":"hello","image":"fake.docker.io/google-samples/hello-go-gke:1.0"},
                 {"name":"istio-proxy","image":"auto","resources":{"requests":{"cpu":"123m"},"limits":{"cpu":"3000m"}},
                  "livenessProbe":{"failureThreshold":30,"httpGet":{"path":"/healthz/ready","port":15021},
                    "initialDelaySeconds":10,"periodSeconds":2,"timeoutSeconds":3},
                  "tty":true,"terminationMessagePath":"/foo/bar",
                  "volumeMounts":[{"mountPath":"/etc/certs","name":"certs"}],
                  "lifecycle":{"preStop":{"exec":{"command":["sleep","10"]}}},
                  "securityContext":{"allowPrivilegeEscalation":true,"readOnlyRootFilesystem":false,
                    "runAsUser":1234,"runAsGroup":1234}}]"""));
        pod.getAsJsonObject("spec").add("volumes", array("[{\"name\":\"certs\",\"secret\":{\"secretName\":\"istio-certs\"}}]"));
        return pod;
    }

    static JsonObject helloProbes() {
        JsonObject pod = hello();
        pod.getAsJsonObject("spec").add("containers", array("""
                [{"name":"hello","image":"fake.docker.io/google-samples/hello-go-gke:1.0",
                  "ports":[{"name":"http","containerPort":80}],
                  "livenessProbe":{"httpGet":{"port":"http"}},"readinessProbe":{"httpGet":{"port":3333}},
                  "lifecycle":{"preStop":{"httpGet":{"port":91}},"postStart":{"tcpSocket":{"port":93}}}},
                 {"name":"world","image":"fake.docker.io/google-samples/hello-go-gke:1.0",
                  "ports":[{"name":"http","containerPort":90}],
                  "livenessProbe":{"httpGet":{"port":"http"}},
                  "readinessProbe":{"exec":{"command":["cat","/tmp/healthy"]}}}]"""));
        return pod;
    }

    /** The annotations with proxy.istio.io/overrides read as JSON (its member order is Go's struct order). */
    static JsonObject jsonValued(JsonObject annotations) {
        JsonObject copy = annotations.deepCopy();
        if (copy.has("proxy.istio.io/overrides")) {
            copy.add("proxy.istio.io/overrides", JsonParser.parseString(copy.get("proxy.istio.io/overrides").getAsString()));
        }
        return copy;
    }

    static SidecarInjector injector(Setup s) {
        SidecarInjector.Settings settings = new SidecarInjector.Settings(s.config, s.values);
        return new SidecarInjector(() -> settings, () -> MESH, s.revision, s.nativeSidecars, ns -> s.namespaceLabels);
    }

    /** The pod after a JSON Patch library applies the patch. */
    static JsonObject apply(JsonObject pod, JsonArray patch) {
        return InjectWebhookCalls.applyPatch(pod, patch);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void podMatchesIstiodsInjection(Row row) {
        Setup s = new Setup();
        row.setup().accept(s);
        JsonObject input = row.pod().deepCopy();
        input.getAsJsonObject("metadata").addProperty("namespace", s.namespace);
        Expected x = baseline(row.pod());
        row.expect().accept(x);
        var outcome = injector(s).inject(input, s.namespace, s.path);
        if (x.refusedWith != null) {
            assertEquals(SidecarInjector.Kind.FAILED, outcome.kind(), row.name());
            assertTrue(outcome.message().contains(x.refusedWith), outcome.message());
            assertTrue(outcome.message().contains("'127.0.0.1'"), outcome.message());
            return;
        }
        if (x.unrenderedTemplates != null) {
            assertEquals(SidecarInjector.Kind.UNSUPPORTED_TEMPLATE, outcome.kind(), row.name());
            assertTrue(outcome.message().contains(x.unrenderedTemplates), outcome.message());
            assertNull(outcome.patch());
            return;
        }
        if (!x.injected) {
            assertNull(outcome.patch(), row.name() + ": not injected, but got " + outcome.patch());
            assertTrue(outcome.warnings().isEmpty(), row.name() + ": warnings " + outcome.warnings());
            return;
        }
        assertEquals(SidecarInjector.Kind.INJECTED, outcome.kind(), row.name() + ": " + outcome.message());
        JsonObject pod = apply(input, outcome.patch());
        JsonObject spec = pod.getAsJsonObject("spec");
        assertEquals(x.initContainers, spec.get("initContainers"), row.name() + ": initContainers");
        assertEquals(x.containers, spec.get("containers"), row.name() + ": containers");
        assertEquals(x.volumes, spec.get("volumes"), row.name() + ": volumes");
        assertEquals(jsonValued(x.annotations), jsonValued(pod.getAsJsonObject("metadata").getAsJsonObject("annotations")),
                row.name() + ": annotations");
        Map<String, String> labels = Pods.stringMap(pod, "metadata", "labels");
        x.labels.forEach((k, v) -> assertEquals(v, labels.get(k), row.name() + ": label " + k));
        assertTrue(x.labels.containsKey("topology.istio.io/network") || !labels.containsKey("topology.istio.io/network"),
                row.name() + ": unexpected network label");

        // istiod's stripPod makes a second pass over the injected pod a no-op: an existing sidecar is not doubled
        var again = injector(s).inject(pod, s.namespace, s.path);
        assertEquals(pod, apply(pod, again.patch()), row.name() + ": re-injecting an injected pod changed it");
    }
}
