package io.meshpilot.inject.kubegateway;

import static io.meshpilot.inject.SidecarTemplate.env;
import static io.meshpilot.inject.SidecarTemplate.fieldRef;
import static io.meshpilot.inject.SidecarTemplate.firstNonEmpty;
import static io.meshpilot.inject.SidecarTemplate.mount;
import static io.meshpilot.inject.SidecarTemplate.resourceRef;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.inject.SidecarTemplate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's {@code kube-gateway} and {@code waypoint} templates (istio-discovery's
 * files/kube-gateway.yaml and waypoint.yaml, Go templates MeshPilot does not interpret) rendered
 * natively: the ServiceAccount, Deployment, Service, HorizontalPodAutoscaler and
 * PodDisruptionBudget of one managed Gateway, each owned by the Gateway. The two templates share
 * these objects; they differ in the pod ({@link WaypointTemplate} for a waypoint's) and the
 * waypoint Service's {@code networking.istio.io/traffic-distribution: PreferClose}. The pod opts
 * out of injection and carries the whole {@code istio-proxy} container, built from the injector
 * values and the mesh's default proxy config with the helpers of the injection templates.
 */
public final class KubeGatewayTemplate {
    public static final String GATEWAY_NAME_LABEL = "gateway.networking.k8s.io/gateway-name";
    public static final String GATEWAY_CLASS_LABEL = "gateway.networking.k8s.io/gateway-class-name";
    /** The label istiod's apply() puts on every object it writes, and canManage looks for. */
    public static final String MANAGED_LABEL = "gateway.istio.io/managed";
    public static final String CONTROLLER_VERSION_ANNOTATION = "gateway.istio.io/controller-version";
    /** "Larger numbers win": istiod 1.18 and later write 5. */
    public static final int CONTROLLER_VERSION = 5;
    /** The Gateway's annotations that steer the controller and are not copied onto the objects. */
    private static final List<String> CONTROL_ANNOTATIONS = List.of("kubectl.kubernetes.io/last-applied-configuration",
            DeploymentInput.NAME_OVERRIDE, DeploymentInput.SERVICE_ACCOUNT, CONTROLLER_VERSION_ANNOTATION);

    private final DeploymentInput in;
    private final InjectionValues v;
    private final MeshConfig mesh;
    private final SidecarTemplate proxy;

    private KubeGatewayTemplate(DeploymentInput in, InjectionValues values, MeshConfig mesh) {
        this.in = in;
        this.v = values;
        this.mesh = mesh;
        // the injection helpers read annotations from a pod: the template's .ObjectMeta is the Gateway's
        JsonObject annotations = new JsonObject();
        in.gatewayAnnotations().forEach(annotations::addProperty);
        JsonObject meta = new JsonObject();
        meta.add("annotations", annotations);
        JsonObject pod = new JsonObject();
        pod.add("metadata", meta);
        pod.add("spec", new JsonObject());
        ProxyConfig pc = mesh.getDefaultConfig();
        this.proxy = new SidecarTemplate(new SidecarTemplate.Input(pod, values, pc.getProxyMetadataMap(),
                SidecarInjector.proxyConfigJson(pc), pc.getInterceptionMode().name(), false, mesh.getTrustDomain(), false,
                false, in.revision(), new SidecarTemplate.DeployMeta(in.deploymentName(), in.namespace(), "apps/v1",
                "Deployment"), ""));
    }

    /**
     * The objects in the template's order: ServiceAccount, Deployment, Service,
     * HorizontalPodAutoscaler, PodDisruptionBudget (the last two are kept only when an overlay
     * configures them: {@link Overlays}).
     */
    public static List<JsonObject> render(DeploymentInput in, InjectionValues values, MeshConfig mesh) {
        KubeGatewayTemplate t = new KubeGatewayTemplate(in, values, mesh);
        return List.of(t.serviceAccount(), t.deployment(), t.service(), t.autoscaler(), t.disruptionBudget());
    }

    /**
     * The objects to apply for a Gateway: the template's, the overlays laid over them, each
     * labelled as managed (istiod's render, then apply's label).
     *
     * @throws IllegalArgumentException an overlay is refused
     */
    public static List<JsonObject> objects(DeploymentInput input, InjectionValues values, MeshConfig mesh,
                                           List<Map<String, String>> overlays) {
        List<JsonObject> objects = Overlays.apply(render(input, values, mesh), overlays);
        for (JsonObject o : objects) {
            JsonObject meta = DeploymentInput.object(o, "metadata");
            JsonObject labels = DeploymentInput.object(meta, "labels");
            labels.addProperty(MANAGED_LABEL, input.deploymentClass().managedLabel());
            meta.add("labels", labels);
        }
        return objects;
    }

    /** The server-side apply that claims a Gateway for this controller version (on its status subresource). */
    public static JsonObject controllerVersionClaim() {
        JsonObject annotations = new JsonObject();
        annotations.addProperty(CONTROLLER_VERSION_ANNOTATION, Integer.toString(CONTROLLER_VERSION));
        JsonObject meta = new JsonObject();
        meta.add("annotations", annotations);
        JsonObject patch = new JsonObject();
        patch.addProperty("apiVersion", "gateway.networking.k8s.io/v1");
        patch.addProperty("kind", "Gateway");
        patch.add("metadata", meta);
        return patch;
    }

    private JsonObject serviceAccount() {
        // owner references on ServiceAccounts are safe from 1.28 (kubernetes#117412)
        return object("v1", "ServiceAccount", in.serviceAccount(), gatewayLabels(false), in.kubeVersion() >= 128);
    }

    private JsonObject deployment() {
        JsonObject d = object("apps/v1", "Deployment", in.deploymentName(), gatewayLabels(true), true);
        JsonObject spec = new JsonObject();
        spec.add("selector", matchLabels());
        JsonObject template = new JsonObject();
        JsonObject meta = new JsonObject();
        Map<String, String> annotations = objectAnnotations();
        annotations.put("istio.io/rev", firstNonEmpty(in.revision(), "default"));
        annotations.put("prometheus.io/path", "/stats/prometheus");
        annotations.put("prometheus.io/port", "15020");
        annotations.put("prometheus.io/scrape", "true");
        meta.add("annotations", json(annotations));
        Map<String, String> labels = new LinkedHashMap<>();
        labels.put("sidecar.istio.io/inject", "false");
        if (in.deploymentClass().waypoint()) {
            // a waypoint is not itself captured by ztunnel (its infrastructure labels may still say otherwise)
            labels.put(DeploymentInput.DATAPLANE_MODE_LABEL, "none");
        }
        labels.put("service.istio.io/canonical-name", in.deploymentName());
        labels.put("service.istio.io/canonical-revision", "latest");
        labels.putAll(gatewayLabels(true));
        meta.add("labels", json(labels));
        template.add("metadata", meta);
        template.add("spec", in.deploymentClass().waypoint() ? new WaypointTemplate(in, v, mesh, proxy).podSpec()
                : podSpec());
        spec.add("template", template);
        d.add("spec", spec);
        return d;
    }

    private JsonObject podSpec() {
        JsonObject spec = new JsonObject();
        JsonObject securityContext;
        if (v.truthy("gateways.securityContext")) {
            securityContext = v.get("gateways.securityContext").deepCopy().getAsJsonObject();
        } else {
            securityContext = JsonParser.parseString(
                    "{\"sysctls\":[{\"name\":\"net.ipv4.ip_unprivileged_port_start\",\"value\":\"0\"}]}").getAsJsonObject();
            if (v.truthy("gateways.seccompProfile")) {
                securityContext.add("seccompProfile", v.get("gateways.seccompProfile").deepCopy());
            }
        }
        spec.add("securityContext", securityContext);
        addProxyAndVolumes(spec, in.serviceAccount(), container(), volumes(), proxy);
        return spec;
    }

    /** What both templates' pods end with: the service account, the one proxy container, the volumes, pull secrets. */
    static void addProxyAndVolumes(JsonObject spec, String serviceAccount, JsonObject container, JsonArray volumes,
                                   SidecarTemplate proxy) {
        spec.addProperty("serviceAccountName", serviceAccount);
        JsonArray containers = new JsonArray();
        containers.add(container);
        spec.add("containers", containers);
        spec.add("volumes", volumes);
        proxy.addImagePullSecrets(spec);
    }

    /** The proxy container's ports in both templates: the agent's metrics, its status port, Envoy's Prometheus. */
    static JsonArray proxyPorts() {
        return JsonParser.parseString("[{\"containerPort\":15020,\"name\":\"metrics\",\"protocol\":\"TCP\"},"
                + "{\"containerPort\":15021,\"name\":\"status-port\",\"protocol\":\"TCP\"},"
                + "{\"containerPort\":15090,\"protocol\":\"TCP\",\"name\":\"http-envoy-prom\"}]").getAsJsonArray();
    }

    private JsonObject container() {
        JsonObject c = SidecarTemplate.named(SidecarTemplate.PROXY);
        c.addProperty("image", image(in, v, proxy));
        if (v.truthy("global.proxy.resources")) {
            c.add("resources", withoutNulls(v.get("global.proxy.resources")));
        }
        if (v.truthy("global.imagePullPolicy")) {
            c.addProperty("imagePullPolicy", v.string("global.imagePullPolicy"));
        }
        c.add("securityContext", JsonParser.parseString("{\"capabilities\":{\"drop\":[\"ALL\"]},"
                + "\"allowPrivilegeEscalation\":false,\"privileged\":false,\"readOnlyRootFilesystem\":true,"
                + "\"runAsUser\":1337,\"runAsGroup\":1337,\"runAsNonRoot\":true}"));
        c.add("ports", proxyPorts());
        c.add("args", SidecarTemplate.strings(args()));
        if (v.truthy("global.proxy.lifecycle")) {
            c.add("lifecycle", v.get("global.proxy.lifecycle").deepCopy());
        }
        c.add("env", proxyEnv());
        c.add("startupProbe", probe(30, 1, 1));
        c.add("readinessProbe", probe(4, 0, 15));
        c.add("volumeMounts", volumeMounts());
        return c;
    }

    private List<String> args() {
        List<String> args = new ArrayList<>(List.of("proxy", "router", "--domain",
                "$(POD_NAMESPACE).svc." + v.string("global.proxy.clusterDomain"),
                "--proxyLogLevel", annotation("sidecar.istio.io/logLevel", "global.proxy.logLevel"),
                "--proxyComponentLogLevel", annotation("sidecar.istio.io/componentLogLevel", "global.proxy.componentLogLevel"),
                "--log_output_level", annotation("sidecar.istio.io/agentLogLevel", "global.logging.level")));
        if (v.truthy("global.sts.servicePort")) {
            args.add("--stsPort=" + v.string("global.sts.servicePort"));
        }
        if (v.truthy("global.logAsJson")) {
            args.add("--log_as_json");
        }
        return args;
    }

    private String annotation(String name, String valuePath) {
        return annotation(in, v, name, valuePath);
    }

    /** The Gateway's annotation {@code name} (the templates' {@code annotation .ObjectMeta}), else the value at {@code valuePath}. */
    static String annotation(DeploymentInput in, InjectionValues v, String name, String valuePath) {
        return in.gatewayAnnotations().getOrDefault(name, v.string(valuePath));
    }

    /** The proxy image: the annotation's or the values' when it is a whole reference (has a '/'), else hub/image:tag. */
    static String image(DeploymentInput in, InjectionValues v, SidecarTemplate proxy) {
        String image = annotation(in, v, "sidecar.istio.io/proxyImage", "global.proxy.image");
        return image.contains("/") ? image : proxy.proxyImage();
    }

    private JsonArray proxyEnv() {
        JsonArray env = new JsonArray();
        proxy.podEnv(env);
        env.add(resourceRef("ISTIO_CPU_LIMIT", "limits.cpu"));
        ProxyConfig pc = mesh.getDefaultConfig();
        env.add(env("PROXY_CONFIG", SidecarInjector.proxyConfigJson(pc) + "\n"));
        env.add(env("ISTIO_META_POD_PORTS", "[]"));
        env.add(env("ISTIO_META_APP_CONTAINERS", ""));
        env.add(resourceRef("GOMEMLIMIT", "limits.memory"));
        env.add(env("ISTIO_META_CLUSTER_ID", firstNonEmpty(v.string("global.multiCluster.clusterName"), in.clusterId())));
        env.add(fieldRef("ISTIO_META_NODE_NAME", "spec.nodeName"));
        env.add(env("ISTIO_META_INTERCEPTION_MODE", pc.getInterceptionMode().name()));
        addNetworkEnv(env, in, v);
        addWorkloadAndMeshEnv(env, in, v, mesh);
        new TreeMap<>(pc.getProxyMetadataMap()).forEach((k, val) -> env.add(env(k, val)));
        String requestedView = in.infrastructureLabels().getOrDefault(DeploymentInput.NETWORK_LABEL, "");
        if (!requestedView.isEmpty()) {
            env.add(env("ISTIO_META_REQUESTED_NETWORK_VIEW", requestedView));
        }
        return env;
    }

    /** ISTIO_META_NETWORK: the infrastructure labels' network, else the values'; none when neither names one. */
    static void addNetworkEnv(JsonArray env, DeploymentInput in, InjectionValues v) {
        String network = firstNonEmpty(in.infrastructureLabels().get(DeploymentInput.NETWORK_LABEL), v.string("global.network"));
        if (!network.isEmpty()) {
            env.add(env("ISTIO_META_NETWORK", network));
        }
    }

    /** The workload's name and owner (its Deployment), then the mesh id and trust domain when known. */
    static void addWorkloadAndMeshEnv(JsonArray env, DeploymentInput in, InjectionValues v, MeshConfig mesh) {
        env.add(env("ISTIO_META_WORKLOAD_NAME", in.deploymentName()));
        env.add(env("ISTIO_META_OWNER", "kubernetes://apis/apps/v1/namespaces/" + in.namespace() + "/deployments/"
                + in.deploymentName()));
        String trustDomain = firstNonEmpty(mesh.getTrustDomain(), v.string("global.trustDomain"));
        String meshId = firstNonEmpty(v.string("global.meshID"), trustDomain);
        if (!meshId.isEmpty()) {
            env.add(env("ISTIO_META_MESH_ID", meshId));
        }
        if (!trustDomain.isEmpty()) {
            env.add(env("TRUST_DOMAIN", trustDomain));
        }
    }

    static JsonObject probe(int failureThreshold, int initialDelay, int period) {
        JsonObject p = SidecarTemplate.healthzReady();
        p.getAsJsonObject("httpGet").addProperty("scheme", "HTTP");
        p.addProperty("failureThreshold", failureThreshold);
        p.addProperty("initialDelaySeconds", initialDelay);
        p.addProperty("periodSeconds", period);
        p.addProperty("successThreshold", 1);
        p.addProperty("timeoutSeconds", 1);
        return p;
    }

    private JsonArray volumeMounts() {
        JsonArray m = new JsonArray();
        m.add(mount("workload-socket", "/var/run/secrets/workload-spiffe-uds"));
        m.add(mount("credential-socket", "/var/run/secrets/credential-uds"));
        m.add(proxy.workloadCertsMount());
        if (v.string("global.pilotCertProvider").equals("istiod")) {
            m.add(mount("istiod-ca-cert", "/var/run/secrets/istio"));
        }
        m.add(mount("istio-data", "/var/lib/istio/data"));
        m.add(mount("istio-envoy", "/etc/istio/proxy"));
        m.add(mount("istio-token", "/var/run/secrets/tokens"));
        m.add(mount("istio-podinfo", "/etc/istio/pod"));
        return m;
    }

    private JsonArray volumes() {
        JsonArray vols = new JsonArray();
        vols.add(SidecarTemplate.named("workload-socket"));
        vols.add(SidecarTemplate.emptyDirVolume("credential-socket"));
        vols.add(v.string("global.caName").equals("GkeWorkloadCertificate") ? proxy.workloadCertsVolume()
                : SidecarTemplate.emptyDirVolume("workload-certs"));
        vols.add(SidecarTemplate.memoryVolume("istio-envoy"));
        vols.add(SidecarTemplate.emptyDirVolume("istio-data"));
        vols.add(SidecarTemplate.podInfoVolume());
        vols.add(proxy.tokenVolume());
        proxy.addIstiodCaVolume(vols);
        return vols;
    }

    private JsonObject service() {
        JsonObject s = object("v1", "Service", in.deploymentName(), gatewayLabels(false), true);
        if (in.deploymentClass().waypoint()) {
            Map<String, String> annotations = new LinkedHashMap<>();
            annotations.put("networking.istio.io/traffic-distribution", "PreferClose");
            annotations.putAll(objectAnnotations());
            DeploymentInput.object(s, "metadata").add("annotations", json(annotations));
        }
        JsonObject spec = new JsonObject();
        spec.addProperty("ipFamilyPolicy", "PreferDualStack");
        JsonArray ports = new JsonArray();
        in.ports().forEach(p -> ports.add(p.toJson()));
        spec.add("ports", ports);
        JsonObject selector = new JsonObject();
        selector.addProperty(GATEWAY_NAME_LABEL, in.name());
        spec.add("selector", selector);
        if (!in.loadBalancerIp().isEmpty()) {
            spec.addProperty("loadBalancerIP", in.loadBalancerIp());
        }
        spec.addProperty("type", in.serviceType());
        s.add("spec", spec);
        return s;
    }

    private JsonObject autoscaler() {
        JsonObject h = object("autoscaling/v2", "HorizontalPodAutoscaler", in.deploymentName(), gatewayLabels(false), true);
        JsonObject spec = new JsonObject();
        JsonObject target = new JsonObject();
        target.addProperty("apiVersion", "apps/v1");
        target.addProperty("kind", "Deployment");
        target.addProperty("name", in.deploymentName());
        spec.add("scaleTargetRef", target);
        spec.addProperty("maxReplicas", 1);
        h.add("spec", spec);
        return h;
    }

    private JsonObject disruptionBudget() {
        JsonObject p = object("policy/v1", "PodDisruptionBudget", in.deploymentName(), gatewayLabels(false), true);
        JsonObject spec = new JsonObject();
        spec.add("selector", matchLabels());
        p.add("spec", spec);
        return p;
    }

    private JsonObject matchLabels() {
        JsonObject labels = new JsonObject();
        labels.addProperty(GATEWAY_NAME_LABEL, in.name());
        JsonObject selector = new JsonObject();
        selector.add("matchLabels", labels);
        return selector;
    }

    /** The infrastructure labels, then the Gateway's name and class (and the managed label where the template writes it). */
    private Map<String, String> gatewayLabels(boolean managed) {
        Map<String, String> labels = new LinkedHashMap<>(in.infrastructureLabels());
        labels.put(GATEWAY_NAME_LABEL, in.name());
        labels.put(GATEWAY_CLASS_LABEL, in.gatewayClass());
        if (managed) {
            labels.put(MANAGED_LABEL, in.deploymentClass().managedLabel());
        }
        return labels;
    }

    private Map<String, String> objectAnnotations() {
        Map<String, String> a = new LinkedHashMap<>(in.infrastructureAnnotations());
        CONTROL_ANNOTATIONS.forEach(a::remove);
        return a;
    }

    private JsonObject object(String apiVersion, String kind, String name, Map<String, String> labels, boolean owned) {
        JsonObject o = new JsonObject();
        o.addProperty("apiVersion", apiVersion);
        o.addProperty("kind", kind);
        JsonObject meta = new JsonObject();
        meta.addProperty("name", name);
        meta.addProperty("namespace", in.namespace());
        meta.add("annotations", json(objectAnnotations()));
        meta.add("labels", json(labels));
        if (owned) {
            JsonObject owner = new JsonObject();
            owner.addProperty("apiVersion", "gateway.networking.k8s.io/v1");
            owner.addProperty("kind", "Gateway");
            owner.addProperty("name", in.name());
            owner.addProperty("uid", in.uid());
            JsonArray owners = new JsonArray();
            owners.add(owner);
            meta.add("ownerReferences", owners);
        }
        o.add("metadata", meta);
        return o;
    }

    private static JsonObject json(Map<String, String> map) {
        JsonObject o = new JsonObject();
        new TreeMap<>(map).forEach(o::addProperty);
        return o;
    }

    /** Helm's omitNil: a values map with its null entries dropped, at every depth. */
    static JsonElement withoutNulls(JsonElement e) {
        if (!e.isJsonObject()) {
            return e.deepCopy();
        }
        JsonObject out = new JsonObject();
        e.getAsJsonObject().entrySet().forEach(en -> {
            if (!en.getValue().isJsonNull()) {
                out.add(en.getKey(), withoutNulls(en.getValue()));
            }
        });
        return out;
    }
}
