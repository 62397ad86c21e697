package io.meshpilot.inject;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's default {@code sidecar} injection template
 * (manifests/charts/istio-control/istio-discovery/files/injection-template.yaml) rendered
 * natively: the same decisions on the same values, annotations and proxy config, producing
 * the template pod (labels, annotations, init containers, containers, volumes, pull secrets)
 * that is then merged into the pod. The gateway, grpc and other templates are not rendered.
 */
public final class SidecarTemplate {
    public static final String PROXY = "istio-proxy";
    static final String INIT = "istio-init";
    static final String VALIDATION = "istio-validation";
    private static final String MULTUS_NETWORKS = "k8s.v1.cni.cncf.io/networks";

    /** Who owns the pod, as istiod's GetDeployMetaFromPod finds it. */
    public record DeployMeta(String name, String namespace, String apiVersion, String kind) {
    }

    /**
     * Everything the template reads.
     *
     * @param pod              the pod (already stripped of an earlier injection)
     * @param proxyMetadata    the effective proxy config's proxyMetadata
     * @param proxyConfigJson  the effective proxy config, defaults removed, as PROXY_CONFIG carries it
     * @param interceptionMode the effective proxy config's interception mode
     * @param holdApplication  the proxy config's holdApplicationUntilProxyStarts
     * @param trustDomain      the mesh's trust domain
     * @param localhostInbound whether the mesh's inbound traffic policy is LOCALHOST
     * @param otelResourceAttributes the sidecar's OTEL_RESOURCE_ATTRIBUTES, "" for none
     */
    public record Input(JsonObject pod, InjectionValues values, Map<String, String> proxyMetadata, String proxyConfigJson,
                 String interceptionMode, boolean holdApplication, String trustDomain, boolean localhostInbound,
                 boolean nativeSidecars, String revision, DeployMeta deploy, String otelResourceAttributes) {
    }

    private final Input in;
    private final InjectionValues v;
    private final Map<String, String> annotations;
    private final Map<String, String> labels;

    public SidecarTemplate(Input in) {
        this.in = in;
        this.v = in.values();
        this.annotations = Pods.stringMap(in.pod(), "metadata", "annotations");
        this.labels = Pods.stringMap(in.pod(), "metadata", "labels");
    }

    String annotation(String name, String dflt) {
        return annotations.containsKey(name) ? annotations.get(name) : dflt;
    }

    String interceptionMode() {
        return annotation("sidecar.istio.io/interceptionMode", in.interceptionMode());
    }

    boolean tproxy() {
        return interceptionMode().equals("TPROXY");
    }

    boolean nativeSidecar() {
        String a = annotations.getOrDefault("sidecar.istio.io/nativeSidecar", "");
        return !(a.isEmpty() ? Boolean.toString(in.nativeSidecars()) : a).equals("false");
    }

    String statusPort() {
        return annotation("status.sidecar.istio.io/port", v.string("global.proxy.statusPort"));
    }

    /** A template's output: labels and annotations for the pod's metadata, and its spec. */
    static JsonObject templatePod(JsonObject labels, JsonObject annotations, JsonObject spec) {
        JsonObject meta = new JsonObject();
        meta.add("labels", labels);
        meta.add("annotations", annotations);
        JsonObject pod = new JsonObject();
        pod.add("metadata", meta);
        pod.add("spec", spec);
        return pod;
    }

    /** The template pod: {@code metadata} (labels, annotations) and {@code spec}. */
    JsonObject render() {
        JsonObject spec = new JsonObject();
        boolean nativeSidecar = nativeSidecar();
        boolean noInit = interceptionMode().equals("NONE") && !nativeSidecar;
        JsonArray inits = new JsonArray();
        if (!noInit && !interceptionMode().equals("NONE")) {
            inits.add(initContainer());
        }
        JsonArray containers = new JsonArray();
        (nativeSidecar ? inits : containers).add(proxy(nativeSidecar));
        spec.add("initContainers", inits);
        spec.add("containers", containers);
        spec.add("volumes", volumes());
        addImagePullSecrets(spec);
        return templatePod(labels(), annotations(), spec);
    }

    /** global.imagePullSecrets, when set (every proxy template). */
    public void addImagePullSecrets(JsonObject spec) {
        if (v.truthy("global.imagePullSecrets")) {
            JsonArray secrets = new JsonArray();
            v.get("global.imagePullSecrets").getAsJsonArray().forEach(s -> secrets.add(named(s.getAsString())));
            spec.add("imagePullSecrets", secrets);
        }
    }

    /** The readiness probe on the given port from the values, the status annotations first when {@code annotated}. */
    JsonObject readinessProbe(int port, boolean annotated) {
        JsonObject p = healthzReady();
        p.getAsJsonObject("httpGet").addProperty("port", port);
        int delay = Integer.parseInt(annotated ? annotation("readiness.status.sidecar.istio.io/initialDelaySeconds",
                v.string("global.proxy.readinessInitialDelaySeconds")) : v.string("global.proxy.readinessInitialDelaySeconds"));
        if (delay != 0) { // Kubernetes omits a zero
            p.addProperty("initialDelaySeconds", delay);
        }
        p.addProperty("periodSeconds", Integer.parseInt(annotated ? annotation("readiness.status.sidecar.istio.io/periodSeconds",
                v.string("global.proxy.readinessPeriodSeconds")) : v.string("global.proxy.readinessPeriodSeconds")));
        p.addProperty("timeoutSeconds", 3);
        p.addProperty("failureThreshold", Integer.parseInt(annotated ? annotation(
                "readiness.status.sidecar.istio.io/failureThreshold", v.string("global.proxy.readinessFailureThreshold"))
                : v.string("global.proxy.readinessFailureThreshold")));
        return p;
    }

    public static JsonObject named(String name) {
        JsonObject o = new JsonObject();
        o.addProperty("name", name);
        return o;
    }

    private JsonObject labels() {
        JsonObject l = new JsonObject();
        l.addProperty("security.istio.io/tlsMode", firstNonEmpty(labels.get("security.istio.io/tlsMode"), "istio"));
        if ("true".equals(in.proxyMetadata().get("ISTIO_META_ENABLE_HBONE"))) {
            l.addProperty("networking.istio.io/tunnel", firstNonEmpty(labels.get("networking.istio.io/tunnel"), "http"));
        }
        String canonical = canonicalName();
        canonical = canonical.length() > 63 ? canonical.substring(0, 63) : canonical;
        l.addProperty("service.istio.io/canonical-name", trimAll(canonical, "-_."));
        l.addProperty("service.istio.io/canonical-revision", canonicalRevision());
        return l;
    }

    /** The canonical service labels as the gateway and gRPC templates write them (not shortened). */
    JsonObject canonicalLabels() {
        JsonObject l = new JsonObject();
        l.addProperty("service.istio.io/canonical-name", canonicalName());
        l.addProperty("service.istio.io/canonical-revision", canonicalRevision());
        return l;
    }

    private String canonicalName() {
        return firstNonEmpty(labels.get("service.istio.io/canonical-name"), labels.get("app.kubernetes.io/name"),
                labels.get("app"), in.deploy().name());
    }

    private String canonicalRevision() {
        return firstNonEmpty(labels.get("service.istio.io/canonical-revision"), labels.get("app.kubernetes.io/version"),
                labels.get("version"), "latest");
    }

    private JsonObject annotations() {
        JsonObject a = revisionAnnotations();
        if (v.cniEnabled()) {
            cniAnnotations(a);
        }
        return a;
    }

    /** {@code istio.io/rev} and the first app container as kubectl's default, unless the pod names one (every template). */
    JsonObject revisionAnnotations() {
        JsonObject a = new JsonObject();
        a.addProperty("istio.io/rev", firstNonEmpty(in.revision(), "default"));
        List<String> apps = appContainers();
        if (!apps.isEmpty()) {
            if (!annotations.containsKey("kubectl.kubernetes.io/default-logs-container")) {
                a.addProperty("kubectl.kubernetes.io/default-logs-container", apps.get(0));
            }
            if (!annotations.containsKey("kubectl.kubernetes.io/default-container")) {
                a.addProperty("kubectl.kubernetes.io/default-container", apps.get(0));
            }
        }
        return a;
    }

    /** The CNI plugin reads the redirection settings from these annotations; multus learns of istio-cni from its own. */
    private void cniAnnotations(JsonObject a) {
        if (v.string("pilot.cni.provider").equals("multus")) {
            a.addProperty(MULTUS_NETWORKS, appendMultusNetwork(annotations.getOrDefault(MULTUS_NETWORKS, ""), "default/istio-cni"));
        }
        a.addProperty("sidecar.istio.io/interceptionMode", interceptionMode());
        putIfNotEmpty(a, "traffic.sidecar.istio.io/includeOutboundIPRanges", annotation(
                "traffic.sidecar.istio.io/includeOutboundIPRanges", v.string("global.proxy.includeIPRanges")));
        putIfNotEmpty(a, "traffic.sidecar.istio.io/excludeOutboundIPRanges", annotation(
                "traffic.sidecar.istio.io/excludeOutboundIPRanges", v.string("global.proxy.excludeIPRanges")));
        a.addProperty("traffic.sidecar.istio.io/includeInboundPorts", annotation(
                "traffic.sidecar.istio.io/includeInboundPorts", v.string("global.proxy.includeInboundPorts")));
        a.addProperty("traffic.sidecar.istio.io/excludeInboundPorts", excludeInboundPort(statusPort(), annotation(
                "traffic.sidecar.istio.io/excludeInboundPorts", v.string("global.proxy.excludeInboundPorts"))));
        if (annotations.containsKey("traffic.sidecar.istio.io/includeOutboundPorts")
                || !v.string("global.proxy.includeOutboundPorts").isEmpty()) {
            a.addProperty("traffic.sidecar.istio.io/includeOutboundPorts", annotation(
                    "traffic.sidecar.istio.io/includeOutboundPorts", v.string("global.proxy.includeOutboundPorts")));
        }
        if (annotations.containsKey("traffic.sidecar.istio.io/excludeOutboundPorts")
                || !v.string("global.proxy.excludeOutboundPorts").isEmpty()) {
            a.addProperty("traffic.sidecar.istio.io/excludeOutboundPorts", annotation(
                    "traffic.sidecar.istio.io/excludeOutboundPorts", v.string("global.proxy.excludeOutboundPorts")));
        }
        for (String k : List.of("traffic.sidecar.istio.io/kubevirtInterfaces", "istio.io/reroute-virtual-interfaces",
                "traffic.sidecar.istio.io/excludeInterfaces")) {
            putIfNotEmpty(a, k, annotations.getOrDefault(k, ""));
        }
    }

    /**
     * The multus networks annotation with istio-cni's network added unless there: a JSON list gets
     * an object before its closing bracket, a plain list {@code , ns/name} (istiod's appendMultusNetwork).
     */
    static String appendMultusNetwork(String existing, String network) {
        if (existing.isEmpty()) {
            return network;
        }
        int slash = network.indexOf('/');
        String ns = slash < 0 ? "" : network.substring(0, slash);
        String name = network.substring(slash + 1);
        int close = existing.lastIndexOf(']');
        if (close >= 0) {
            JsonArray networks;
            try {
                networks = JsonParser.parseString(existing).getAsJsonArray();
            } catch (RuntimeException e) {
                return existing; // not JSON: istiod leaves it as it is
            }
            for (JsonElement n : networks) {
                JsonObject o = n.isJsonObject() ? n.getAsJsonObject() : new JsonObject();
                if (name.equals(Pods.string(o, "name")) && ns.equals(Pods.string(o, "namespace"))) {
                    return existing;
                }
            }
            String entry = ns.isEmpty() ? ", {\"name\": \"" + name + "\"}"
                    : ", {\"name\": \"" + name + "\", \"namespace\": \"" + ns + "\"}";
            return existing.substring(0, close) + entry + existing.substring(close);
        }
        for (String n : existing.split(",")) {
            if (n.strip().equals(network)) {
                return existing;
            }
        }
        return existing + ", " + network;
    }

    private static void putIfNotEmpty(JsonObject o, String k, String value) {
        if (!value.isEmpty()) {
            o.addProperty(k, value);
        }
    }

    /** The pod's container names other than the proxy, in order. */
    List<String> appContainers() {
        List<String> names = new ArrayList<>();
        for (JsonElement c : Pods.array(in.pod(), "containers")) {
            String n = c.getAsJsonObject().get("name").getAsString();
            if (!n.equals(PROXY)) {
                names.add(n);
            }
        }
        return names;
    }

    /** The proxy's image: the proxyImage annotation or global.proxy.image when either names a repository, else hub/image:tag. */
    public String proxyImage() {
        return image(annotation("sidecar.istio.io/proxyImage", v.string("global.proxy.image")), v.string("global.proxy.image"));
    }

    private String image(String annotationOrValue, String imageName) {
        if (annotationOrValue.contains("/")) {
            return annotationOrValue;
        }
        String name = imageName.isEmpty() ? "proxyv2" : imageName;
        String variant = v.string("global.variant");
        return v.string("global.hub") + "/" + name + ":" + v.string("global.tag") + (variant.isEmpty() ? "" : "-" + variant);
    }

    private JsonObject initContainer() {
        JsonObject c = new JsonObject();
        boolean cni = v.cniEnabled();
        c.addProperty("name", cni ? VALIDATION : INIT);
        c.addProperty("image", image(annotation("sidecar.istio.io/proxyImage", v.string("global.proxy_init.image")),
                v.string("global.proxy_init.image")));
        List<String> args = new ArrayList<>(List.of("istio-iptables", "-p", "15001", "-z", "15006", "-u", "1337", "-m",
                interceptionMode(),
                "-i", annotation("traffic.sidecar.istio.io/includeOutboundIPRanges", v.string("global.proxy.includeIPRanges")),
                "-x", annotation("traffic.sidecar.istio.io/excludeOutboundIPRanges", v.string("global.proxy.excludeIPRanges")),
                "-b", annotation("traffic.sidecar.istio.io/includeInboundPorts", v.string("global.proxy.includeInboundPorts")),
                "-d"));
        String excluded = excludeInboundPort(statusPort(), annotation("traffic.sidecar.istio.io/excludeInboundPorts",
                v.string("global.proxy.excludeInboundPorts")));
        args.add(excluded.isEmpty() ? "15090,15021" : "15090,15021," + excluded);
        if (annotations.containsKey("traffic.sidecar.istio.io/includeOutboundPorts")
                || !v.string("global.proxy.includeOutboundPorts").isEmpty()) {
            args.add("-q");
            args.add(annotation("traffic.sidecar.istio.io/includeOutboundPorts", v.string("global.proxy.includeOutboundPorts")));
        }
        if (annotations.containsKey("traffic.sidecar.istio.io/excludeOutboundPorts")
                || !v.string("global.proxy.excludeOutboundPorts").isEmpty()) {
            args.add("-o");
            args.add(annotation("traffic.sidecar.istio.io/excludeOutboundPorts", v.string("global.proxy.excludeOutboundPorts")));
        }
        if (annotations.containsKey("istio.io/reroute-virtual-interfaces")) {
            args.add("-k");
            args.add(annotations.get("istio.io/reroute-virtual-interfaces"));
        } else if (annotations.containsKey("traffic.sidecar.istio.io/kubevirtInterfaces")) {
            args.add("-k");
            args.add(annotations.get("traffic.sidecar.istio.io/kubevirtInterfaces"));
        }
        if (annotations.containsKey("traffic.sidecar.istio.io/excludeInterfaces")) {
            args.add("-c");
            args.add(annotations.get("traffic.sidecar.istio.io/excludeInterfaces"));
        }
        args.add("--log_output_level=" + annotation("sidecar.istio.io/agentLogLevel", v.string("global.logging.level")));
        if (v.truthy("global.logAsJson")) {
            args.add("--log_as_json");
        }
        if (cni) {
            args.add("--run-validation");
            args.add("--skip-rule-apply");
        } else if (v.truthy("global.proxy_init.forceApplyIptables")) {
            args.add("--force-apply");
        }
        if (v.truthy("global.nativeNftables")) {
            args.add("--native-nftables");
        }
        c.add("args", strings(args));
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        if (!in.proxyMetadata().isEmpty()) {
            JsonArray env = new JsonArray();
            new TreeMap<>(in.proxyMetadata()).forEach((k, val) -> env.add(env(k, val)));
            c.add("env", env);
        }
        c.add("resources", resources());
        JsonObject sc = new JsonObject();
        boolean privileged = v.truthy("global.proxy.privileged");
        sc.addProperty("allowPrivilegeEscalation", privileged);
        sc.addProperty("privileged", privileged);
        JsonObject caps = new JsonObject();
        if (!cni) {
            caps.add("add", strings(List.of("NET_ADMIN", "NET_RAW")));
        }
        caps.add("drop", strings(List.of("ALL")));
        sc.add("capabilities", caps);
        sc.addProperty("readOnlyRootFilesystem", cni);
        sc.addProperty("runAsGroup", cni ? 1337 : 0);
        sc.addProperty("runAsNonRoot", cni);
        sc.addProperty("runAsUser", cni ? 1337 : 0);
        if (v.truthy("global.proxy.seccompProfile")) {
            sc.add("seccompProfile", v.get("global.proxy.seccompProfile").deepCopy());
        }
        c.add("securityContext", sc);
        return c;
    }

    private JsonObject proxy(boolean nativeSidecar) {
        JsonObject c = new JsonObject();
        c.addProperty("name", PROXY);
        c.addProperty("image", proxyImage());
        if (nativeSidecar) {
            c.addProperty("restartPolicy", "Always");
        }
        JsonObject prom = new JsonObject();
        prom.addProperty("containerPort", 15090);
        prom.addProperty("protocol", "TCP");
        prom.addProperty("name", "http-envoy-prom");
        JsonArray ports = new JsonArray();
        ports.add(prom);
        c.add("ports", ports);
        List<String> args = agentArgs("sidecar");
        if (v.truthy("global.proxy.outlierLogPath")) {
            args.add("--outlierLogPath=" + v.string("global.proxy.outlierLogPath"));
        }
        c.add("args", strings(args));
        boolean hold = (in.holdApplication() || v.truthy("global.proxy.holdApplicationUntilProxyStarts")) && !nativeSidecar;
        if (v.truthy("global.proxy.lifecycle")) {
            c.add("lifecycle", v.get("global.proxy.lifecycle").deepCopy());
        } else if (hold) {
            c.add("lifecycle", JsonParser.parseString(
                    "{\"postStart\":{\"exec\":{\"command\":[\"pilot-agent\",\"wait\"]}}}"));
        } else if (nativeSidecar) {
            JsonObject exec = new JsonObject();
            exec.add("command", strings(List.of("pilot-agent", "request", "--debug-port=" + statusPort(), "POST", "drain")));
            JsonObject preStop = new JsonObject();
            preStop.add("exec", exec);
            JsonObject lifecycle = new JsonObject();
            lifecycle.add("preStop", preStop);
            c.add("lifecycle", lifecycle);
        }
        c.add("env", proxyEnv());
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        if (!statusPort().equals("0")) {
            if (v.truthy("global.proxy.startupProbe.enabled")) {
                JsonObject p = healthzReady();
                p.addProperty("periodSeconds", 1);
                p.addProperty("timeoutSeconds", 3);
                p.addProperty("failureThreshold", Integer.parseInt(v.string("global.proxy.startupProbe.failureThreshold")));
                c.add("startupProbe", p);
            }
            c.add("readinessProbe", readinessProbe(15021, true));
        }
        c.add("securityContext", proxySecurityContext());
        c.add("resources", resources());
        c.add("volumeMounts", volumeMounts());
        return c;
    }

    /** pilot-agent's arguments for a proxy of the given type ({@code sidecar} or {@code router}). */
    List<String> agentArgs(String type) {
        List<String> args = new ArrayList<>(List.of("proxy", type, "--domain",
                "$(POD_NAMESPACE).svc." + v.string("global.proxy.clusterDomain"),
                "--proxyLogLevel=" + annotation("sidecar.istio.io/logLevel", v.string("global.proxy.logLevel")),
                "--proxyComponentLogLevel=" + annotation("sidecar.istio.io/componentLogLevel",
                        v.string("global.proxy.componentLogLevel")),
                "--log_output_level=" + annotation("sidecar.istio.io/agentLogLevel", v.string("global.logging.level"))));
        if (v.truthy("global.sts.servicePort")) {
            args.add("--stsPort=" + v.string("global.sts.servicePort"));
        }
        if (v.truthy("global.logAsJson")) {
            args.add("--log_as_json");
        }
        return args;
    }

    public static JsonObject healthzReady() {
        JsonObject get = new JsonObject();
        get.addProperty("path", "/healthz/ready");
        get.addProperty("port", 15021);
        JsonObject p = new JsonObject();
        p.add("httpGet", get);
        return p;
    }

    private JsonObject proxySecurityContext() {
        JsonObject sc = new JsonObject();
        if ("true".equals(in.proxyMetadata().get("IPTABLES_TRACE_LOGGING"))) {
            return JsonParser.parseString("{\"allowPrivilegeEscalation\":true,\"capabilities\":{\"add\":[\"NET_ADMIN\"],"
                    + "\"drop\":[\"ALL\"]},\"privileged\":true,\"readOnlyRootFilesystem\":true,\"runAsGroup\":1337,"
                    + "\"runAsNonRoot\":false,\"runAsUser\":0}").getAsJsonObject();
        }
        boolean privileged = v.truthy("global.proxy.privileged");
        boolean tproxy = tproxy();
        boolean bind = annotation("sidecar.istio.io/capNetBindService", v.string("global.proxy.capNetBindService"))
                .equals("true");
        sc.addProperty("allowPrivilegeEscalation", privileged);
        JsonObject caps = new JsonObject();
        if (tproxy || bind) {
            List<String> add = new ArrayList<>();
            if (tproxy) {
                add.add("NET_ADMIN");
            }
            if (bind) {
                add.add("NET_BIND_SERVICE");
            }
            caps.add("add", strings(add));
        }
        caps.add("drop", strings(List.of("ALL")));
        sc.add("capabilities", caps);
        sc.addProperty("privileged", privileged);
        sc.addProperty("readOnlyRootFilesystem", true);
        if (tproxy || bind) {
            sc.addProperty("runAsNonRoot", false);
            sc.addProperty("runAsUser", 0);
            sc.addProperty("runAsGroup", 1337);
        } else {
            sc.addProperty("runAsNonRoot", true);
            sc.addProperty("runAsUser", 1337);
            sc.addProperty("runAsGroup", 1337);
        }
        if (v.truthy("global.proxy.seccompProfile")) {
            sc.add("seccompProfile", v.get("global.proxy.seccompProfile").deepCopy());
        }
        return sc;
    }

    /** The {@code resources} define: the four annotations when any is set, else global.proxy.resources. */
    JsonObject resources() {
        String cpu = annotations.get("sidecar.istio.io/proxyCPU");
        String memory = annotations.get("sidecar.istio.io/proxyMemory");
        String cpuLimit = annotations.get("sidecar.istio.io/proxyCPULimit");
        String memoryLimit = annotations.get("sidecar.istio.io/proxyMemoryLimit");
        JsonObject r = new JsonObject();
        if (cpu != null || memory != null || cpuLimit != null || memoryLimit != null) {
            if (cpu != null || memory != null) {
                r.add("requests", quantities(cpu, memory));
            }
            if (cpuLimit != null || memoryLimit != null) {
                r.add("limits", quantities(cpuLimit, memoryLimit));
            }
            return r;
        }
        JsonElement given = v.get("global.proxy.resources");
        if (given.isJsonObject()) {
            for (String kind : List.of("requests", "limits")) {
                JsonElement q = given.getAsJsonObject().get(kind);
                if (q != null && q.isJsonObject()) {
                    JsonObject out = new JsonObject();
                    q.getAsJsonObject().entrySet().stream().filter(e -> !e.getValue().isJsonNull())
                            .forEach(e -> out.addProperty(e.getKey(), ResourceQuantities.canonical(scalar(e.getValue()))));
                    if (!out.isEmpty()) {
                        r.add(kind, out);
                    }
                }
            }
        }
        return r;
    }

    private static String scalar(JsonElement e) {
        if (e.getAsJsonPrimitive().isNumber()) {
            double d = e.getAsDouble();
            return d == Math.rint(d) ? Long.toString((long) d) : e.getAsString();
        }
        return e.getAsString();
    }

    private static JsonObject quantities(String cpu, String memory) {
        JsonObject o = new JsonObject();
        if (cpu != null) {
            o.addProperty("cpu", ResourceQuantities.canonical(cpu));
        }
        if (memory != null) {
            o.addProperty("memory", ResourceQuantities.canonical(memory));
        }
        return o;
    }

    private JsonArray proxyEnv() {
        JsonArray env = new JsonArray();
        if (in.localhostInbound()) {
            env.add(env("REWRITE_PROBE_LEGACY_LOCALHOST_DESTINATION", "true"));
        }
        podEnv(env);
        env.add(resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"));
        env.add(env("PROXY_CONFIG", in.proxyConfigJson() + "\n"));
        env.add(env("ISTIO_META_POD_PORTS", podPorts()));
        env.add(env("ISTIO_META_APP_CONTAINERS", String.join(",", appContainers())));
        env.add(resourceRef("GOMEMLIMIT", "limits.memory"));
        identityEnv(env, true, firstNonEmpty(labels.get("service.istio.io/workload-name"), in.deploy().name()), true);
        if (!in.otelResourceAttributes().isEmpty()) {
            // before the proxy metadata (istiod's template order)
            int metadata = env.size() - in.proxyMetadata().size();
            env.asList().add(metadata, env("OTEL_RESOURCE_ATTRIBUTES", in.otelResourceAttributes()));
        }
        return env;
    }

    /** The certificate provider, the CA's address and the pod's downward-API fields (every proxy template). */
    public void podEnv(JsonArray env) {
        env.add(env("PILOT_CERT_PROVIDER", v.string("global.pilotCertProvider")));
        String revision = v.string("revision");
        env.add(env("CA_ADDR", v.truthy("global.caAddress") ? v.string("global.caAddress")
                : "istiod" + (revision.isEmpty() ? "" : "-" + revision) + "." + v.string("global.istioNamespace") + ".svc:15012"));
        env.add(fieldRef("POD_NAME", "metadata.name"));
        env.add(fieldRef("POD_NAMESPACE", "metadata.namespace"));
        env.add(fieldRef("INSTANCE_IP", "status.podIP"));
        env.add(fieldRef("SERVICE_ACCOUNT", "spec.serviceAccountName"));
        env.add(fieldRef("HOST_IP", "status.hostIP"));
    }

    /**
     * From ISTIO_META_CLUSTER_ID to the proxy metadata (every proxy template): cluster, node,
     * interception mode (not for gRPC), network, workload, owner, bootstrap override (not for gRPC), mesh, trust domain.
     */
    void identityEnv(JsonArray env, boolean envoy, String workload) {
        identityEnv(env, envoy, workload, envoy);
    }

    private void identityEnv(JsonArray env, boolean interception, String workload, boolean bootstrap) {
        env.add(env("ISTIO_META_CLUSTER_ID", firstNonEmpty(v.string("global.multiCluster.clusterName"), "Kubernetes")));
        env.add(fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"));
        if (interception) {
            env.add(env("ISTIO_META_INTERCEPTION_MODE", firstNonEmpty(annotations.get("sidecar.istio.io/interceptionMode"),
                    in.interceptionMode())));
        }
        if (v.truthy("global.network")) {
            env.add(env("ISTIO_META_NETWORK", v.string("global.network")));
        }
        if (!workload.isEmpty()) {
            env.add(env("ISTIO_META_WORKLOAD_NAME", workload));
        }
        if (!in.deploy().apiVersion().isEmpty() && !in.deploy().name().isEmpty()) {
            env.add(env("ISTIO_META_OWNER", "kubernetes://apis/" + in.deploy().apiVersion() + "/namespaces/"
                    + firstNonEmpty(in.deploy().namespace(), "default") + "/"
                    + in.deploy().kind().toLowerCase(Locale.ROOT) + "s/" + in.deploy().name()));
        }
        if (bootstrap && annotations.containsKey("sidecar.istio.io/bootstrapOverride")) {
            env.add(env("ISTIO_BOOTSTRAP_OVERRIDE", "/etc/istio/custom-bootstrap/custom_bootstrap.json"));
        }
        String trustDomain = firstNonEmpty(in.trustDomain(), v.string("global.trustDomain"));
        if (v.truthy("global.meshID")) {
            env.add(env("ISTIO_META_MESH_ID", v.string("global.meshID")));
        } else if (!trustDomain.isEmpty()) {
            env.add(env("ISTIO_META_MESH_ID", trustDomain));
        }
        if (!trustDomain.isEmpty()) {
            env.add(env("TRUST_DOMAIN", trustDomain));
        }
        new TreeMap<>(in.proxyMetadata()).forEach((k, val) -> env.add(env(k, val)));
    }

    /** ISTIO_META_POD_PORTS: each app container port as Go's encoding/json writes a ContainerPort. */
    String podPorts() {
        StringBuilder b = new StringBuilder("[");
        boolean first = true;
        for (JsonElement c : Pods.array(in.pod(), "containers")) {
            JsonElement ports = c.getAsJsonObject().get("ports");
            if (ports == null || !ports.isJsonArray()) {
                continue;
            }
            for (JsonElement p : ports.getAsJsonArray()) {
                JsonObject port = p.getAsJsonObject();
                JsonObject ordered = new JsonObject();
                for (String k : List.of("name", "hostPort", "containerPort", "protocol", "hostIP")) {
                    JsonElement val = port.get(k);
                    if (val != null && !val.isJsonNull() && !(val.isJsonPrimitive() && val.getAsString().isEmpty())
                            && !(k.equals("hostPort") && val.getAsInt() == 0)) {
                        ordered.add(k, val);
                    }
                }
                b.append("\n    ").append(first ? "" : ",").append(ordered);
                first = false;
            }
        }
        return b.append("\n]").toString();
    }

    private JsonArray volumeMounts() {
        JsonArray m = new JsonArray();
        m.add(mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"));
        m.add(mount("credential-socket", "/var/run/secrets/credential-uds"));
        m.add(workloadCertsMount());
        if (v.string("global.pilotCertProvider").equals("istiod")) {
            m.add(mount("istiod-ca-cert", "/var/run/secrets/istio"));
            m.add(mount("istio-ca-crl", "/var/run/secrets/istio/crl"));
        }
        m.add(mount("istio-data", "/var/lib/istio/data"));
        if (annotations.containsKey("sidecar.istio.io/bootstrapOverride")) {
            m.add(mount("custom-bootstrap-volume", "/etc/istio/custom-bootstrap"));
        }
        m.add(mount("istio-envoy", "/etc/istio/proxy"));
        m.add(mount("istio-token", "/var/run/secrets/tokens"));
        if (v.truthy("global.mountMtlsCerts")) {
            m.add(mtlsCertsMount());
        }
        m.add(mount("istio-podinfo", "/etc/istio/pod"));
        userEntries("sidecar.istio.io/userVolumeMount").forEach(m::add);
        return m;
    }

    /** Where the agent finds workload certificates: GKE's CSI driver's or its own. */
    public JsonObject workloadCertsMount() {
        if (v.string("global.caName").equals("GkeWorkloadCertificate")) {
            JsonObject gke = mount("gke-workload-certificate", "/var/run/secrets/workload-spiffe-credentials");
            gke.addProperty("readOnly", true);
            return gke;
        }
        return mount("workload-certs", "/var/run/secrets/workload-spiffe-credentials");
    }

    static JsonObject mtlsCertsMount() {
        JsonObject certs = mount("istio-certs", "/etc/certs/");
        certs.addProperty("readOnly", true);
        return certs;
    }

    /** The JSON map in a user volume annotation, each entry named by its key (keys in Go's sorted order). */
    List<JsonObject> userEntries(String annotationName) {
        String json = annotations.get(annotationName);
        if (json == null) {
            return List.of();
        }
        List<JsonObject> out = new ArrayList<>();
        JsonObject all = JsonParser.parseString(json).getAsJsonObject();
        new TreeMap<>(all.asMap()).forEach((name, spec) -> {
            JsonObject o = new JsonObject();
            o.addProperty("name", name);
            spec.getAsJsonObject().entrySet().forEach(e -> o.add(e.getKey(), e.getValue()));
            out.add(o);
        });
        return out;
    }

    private JsonArray volumes() {
        JsonArray vols = new JsonArray();
        vols.add(named("workload-socket")); // "emptyDir:" with nothing under it: the API server keeps only the name
        vols.add(named("credential-socket"));
        vols.add(workloadCertsVolume());
        addBootstrapOverrideVolume(vols);
        vols.add(memoryVolume("istio-envoy"));
        vols.add(JsonParser.parseString("{\"name\":\"istio-data\",\"emptyDir\":{}}"));
        vols.add(podInfoVolume());
        vols.add(tokenVolume());
        addIstiodCaVolume(vols);
        JsonObject crl = named("istio-ca-crl");
        JsonObject crlMap = new JsonObject();
        crlMap.addProperty("name", firstNonEmpty(v.string("pilot.crlConfigMapName"), "istio-ca-crl"));
        crlMap.addProperty("optional", true);
        crl.add("configMap", crlMap);
        vols.add(crl);
        addMtlsCertsVolume(vols);
        userEntries("sidecar.istio.io/userVolume").forEach(vols::add);
        return vols;
    }

    public JsonObject workloadCertsVolume() {
        if (v.string("global.caName").equals("GkeWorkloadCertificate")) {
            return JsonParser.parseString("{\"name\":\"gke-workload-certificate\",\"csi\":{\"driver\":"
                    + "\"workloadcertificates.security.cloud.google.com\"}}").getAsJsonObject();
        }
        return named("workload-certs");
    }

    void addBootstrapOverrideVolume(JsonArray vols) {
        if (annotations.containsKey("sidecar.istio.io/bootstrapOverride")) {
            JsonObject o = named("custom-bootstrap-volume");
            JsonObject cm = new JsonObject();
            cm.addProperty("name", annotations.get("sidecar.istio.io/bootstrapOverride"));
            o.add("configMap", cm);
            vols.add(o);
        }
    }

    public static JsonObject memoryVolume(String name) {
        JsonObject o = JsonParser.parseString("{\"emptyDir\":{\"medium\":\"Memory\"}}").getAsJsonObject();
        o.addProperty("name", name);
        return o;
    }

    public static JsonObject emptyDirVolume(String name) {
        JsonObject o = named(name);
        o.add("emptyDir", new JsonObject());
        return o;
    }

    public static JsonObject podInfoVolume() {
        return JsonParser.parseString("{\"name\":\"istio-podinfo\",\"downwardAPI\":{\"items\":["
                + "{\"path\":\"labels\",\"fieldRef\":{\"fieldPath\":\"metadata.labels\"}},"
                + "{\"path\":\"annotations\",\"fieldRef\":{\"fieldPath\":\"metadata.annotations\"}}]}}").getAsJsonObject();
    }

    public JsonObject tokenVolume() {
        JsonObject token = JsonParser.parseString("{\"name\":\"istio-token\",\"projected\":{\"sources\":[{"
                + "\"serviceAccountToken\":{\"path\":\"istio-token\",\"expirationSeconds\":43200}}]}}").getAsJsonObject();
        token.getAsJsonObject("projected").getAsJsonArray("sources").get(0).getAsJsonObject()
                .getAsJsonObject("serviceAccountToken").addProperty("audience", v.string("global.sds.token.aud"));
        return token;
    }

    public void addIstiodCaVolume(JsonArray vols) {
        if (v.string("global.pilotCertProvider").equals("istiod")) {
            vols.add(istiodCaVolume());
        }
    }

    /** The root certificate's volume: the ClusterTrustBundle with ENABLE_CLUSTER_TRUST_BUNDLE_API, else the ConfigMap. */
    public JsonObject istiodCaVolume() {
        JsonObject ca = named("istiod-ca-cert");
        String bundle = firstNonEmpty(v.string("global.trustBundleName"), "");
        if ("true".equals(v.string("pilot.env.ENABLE_CLUSTER_TRUST_BUNDLE_API"))) {
            ca.add("projected", JsonParser.parseString("{\"sources\":[{\"clusterTrustBundle\":{\"name\":\"istio.io:istiod-ca:"
                    + firstNonEmpty(bundle, "root-cert") + "\",\"path\":\"root-cert.pem\"}}]}"));
        } else {
            JsonObject cm = new JsonObject();
            cm.addProperty("name", firstNonEmpty(bundle, "istio-ca-root-cert"));
            ca.add("configMap", cm);
        }
        return ca;
    }

    /** The agent's data, pod info, token, CA and mTLS certificate volumes, in the order the gateway and gRPC templates list them. */
    void addAgentVolumes(JsonArray vols) {
        vols.add(emptyDirVolume("istio-data"));
        vols.add(podInfoVolume());
        vols.add(tokenVolume());
        addIstiodCaVolume(vols);
        addMtlsCertsVolume(vols);
    }

    void addMtlsCertsVolume(JsonArray vols) {
        if (v.truthy("global.mountMtlsCerts")) {
            String sa = Pods.string(in.pod(), "spec", "serviceAccountName");
            JsonObject secret = new JsonObject();
            secret.addProperty("optional", true);
            secret.addProperty("secretName", sa.isEmpty() ? "istio.default" : "istio." + sa);
            JsonObject o = named("istio-certs");
            o.add("secret", secret);
            vols.add(o);
        }
    }

    public static JsonObject mount(String name, String path) {
        JsonObject o = new JsonObject();
        o.addProperty("name", name);
        o.addProperty("mountPath", path);
        return o;
    }

    public static JsonObject env(String name, String value) {
        JsonObject o = new JsonObject();
        o.addProperty("name", name);
        o.addProperty("value", value);
        return o;
    }

    public static JsonObject fieldRef(String name, String path) {
        JsonObject ref = new JsonObject();
        ref.addProperty("fieldPath", path);
        JsonObject from = new JsonObject();
        from.add("fieldRef", ref);
        JsonObject o = new JsonObject();
        o.addProperty("name", name);
        o.add("valueFrom", from);
        return o;
    }

    public static JsonObject resourceRef(String name, String resource) {
        JsonObject ref = new JsonObject();
        ref.addProperty("resource", resource);
        ref.addProperty("divisor", "1");
        JsonObject from = new JsonObject();
        from.add("resourceFieldRef", ref);
        JsonObject o = new JsonObject();
        o.addProperty("name", name);
        o.add("valueFrom", from);
        return o;
    }

    public static JsonArray strings(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(s -> a.add(new JsonPrimitive(s)));
        return a;
    }

    /** istiod's excludeInboundPort: the status port added to the excluded inbound ports unless there already. */
    static String excludeInboundPort(String port, String excluded) {
        String p = port.trim();
        if (p.isEmpty() || p.equals("0")) {
            return excluded;
        }
        List<String> out = new ArrayList<>();
        for (String s : excluded.split(",")) {
            if (s.equals(p)) {
                return excluded;
            }
            if (!s.trim().isEmpty()) {
                out.add(s.trim());
            }
        }
        out.add(p);
        return String.join(",", out);
    }

    public static String firstNonEmpty(String... values) {
        for (String s : values) {
            if (s != null && !s.isEmpty()) {
                return s;
            }
        }
        return "";
    }

    private static String trimAll(String s, String chars) {
        int a = 0;
        int b = s.length();
        while (a < b && chars.indexOf(s.charAt(a)) >= 0) {
            a++;
        }
        while (b > a && chars.indexOf(s.charAt(b - 1)) >= 0) {
            b--;
        }
        return s.substring(a, b);
    }
}
