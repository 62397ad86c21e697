package io.meshpilot.inject;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * istiod's sidecar injection for one pod: the decision, the default {@code sidecar}
 * template rendered natively, the merge into the pod with istiod's post-processing
 * (prometheus merge, app probe rewrite, status annotation, container order) and the JSON
 * Patch. A pod asking for a template the settings do not have is refused with istiod's
 * words; one asking for a template other than {@code sidecar} is refused naming it, because
 * MeshPilot does not interpret Go templates. Neither is admitted without its sidecar: it
 * would run outside the mesh.
 */
public final class SidecarInjector {
    private static final System.Logger LOG = System.getLogger(SidecarInjector.class.getName());
    static final String STATUS = "sidecar.istio.io/status";
    /** The user's own versions of the injected containers, kept so that a re-injection honours them again. */
    static final String OVERRIDES = "proxy.istio.io/overrides";
    /** istiod's prefix for an error of the templates (injectPod's). */
    private static final String TEMPLATE_FAILED = "failed to run injection template: ";
    /** The templates rendered natively; any other a pod asks for is refused by name. */
    static final Set<String> RENDERED_TEMPLATES = Set.of(InjectorConfig.SIDECAR_TEMPLATE, GatewayTemplate.NAME,
            GrpcTemplates.AGENT, GrpcTemplates.SIMPLE);
    private static final String RENDERED_NAMES = "\"gateway\", \"grpc-agent\", \"grpc-simple\" and \"sidecar\"";
    private static final String SCRAPE_TARGETS = "prometheus_istio_io_scrape_targets";
    /** The data plane's own ports, never a scrape target (pilot-agent's istioReservedPorts). */
    private static final Map<String, String> ISTIO_RESERVED_PORTS = Map.of("15000", "Envoy admin",
            "15001", "outbound traffic capture", "15004", "pilot debug", "15006", "inbound traffic capture",
            "15008", "HBONE tunnel", "15020", "pilot-agent status / merged Prometheus", "15021", "Envoy health",
            "15053", "DNS proxy", "15090", "Envoy Prometheus (already merged)");
    private static final ProxyConfig PROXY_DEFAULTS = new MeshConfigLoader().defaults().getDefaultConfig();

    /** The ConfigMap's two keys, parsed. */
    public record Settings(InjectorConfig config, InjectionValues values) {
        public static Settings defaults() {
            return new Settings(InjectorConfig.defaults(), InjectionValues.defaults());
        }
    }

    /** What happened to a pod: UNSUPPORTED_TEMPLATE is refused as FAILED is, and counted apart. */
    public enum Kind { INJECTED, SKIPPED, UNSUPPORTED_TEMPLATE, FAILED }

    /**
     * @param patch    the JSON Patch (INJECTED only)
     * @param message  why it was skipped, not injected, or failed
     * @param warnings admission warnings for the user
     */
    public record Outcome(Kind kind, JsonArray patch, String message, List<String> warnings) {
        public Outcome {
            warnings = List.copyOf(warnings);
        }
    }

    private final Supplier<Settings> settings;
    private final Supplier<MeshConfig> mesh;
    private final String revision;
    private final boolean nativeSidecars;
    private final Function<String, Map<String, String>> namespaceLabels;
    private final UnaryOperator<String> revisionOf;

    /**
     * @param nativeSidecars  whether istio-proxy is a native sidecar (an init container with
     *                        restartPolicy Always); istiod decides it from ENABLE_NATIVE_SIDECARS and
     *                        the nodes' kubelet versions, the pod annotation sidecar.istio.io/nativeSidecar wins
     * @param namespaceLabels a namespace's labels, or null when unknown
     */
    /** The settings in force (the injector ConfigMap's, or the chart's defaults); {@code /debug/inject} shows them. */
    public Settings settings() {
        return settings.get();
    }

    public SidecarInjector(Supplier<Settings> settings, Supplier<MeshConfig> mesh, String revision, boolean nativeSidecars,
                           Function<String, Map<String, String>> namespaceLabels) {
        this(settings, mesh, revision, nativeSidecars, namespaceLabels, UnaryOperator.identity());
    }

    /** @param revisionOf the revision an {@code istio.io/rev} value stands for (revision tags, {@code kube.RevisionTags}) */
    public SidecarInjector(Supplier<Settings> settings, Supplier<MeshConfig> mesh, String revision, boolean nativeSidecars,
                           Function<String, Map<String, String>> namespaceLabels, UnaryOperator<String> revisionOf) {
        this.revisionOf = revisionOf;
        this.settings = settings;
        this.mesh = mesh;
        this.revision = revision == null ? "" : revision;
        this.nativeSidecars = nativeSidecars;
        this.namespaceLabels = namespaceLabels;
    }

    /**
     * @param original the pod as the API server sent it
     * @param path     the request path ({@code /inject} or {@code /inject/cluster/X/net/Y})
     */
    public Outcome inject(JsonObject original, String requestNamespace, String path) {
        JsonObject pod = original.deepCopy();
        JsonObject meta = Pods.object(pod, "metadata");
        meta.remove("managedFields"); // large, and no part of the injection
        String namespace = Pods.string(pod, "metadata", "namespace");
        if (namespace.isEmpty()) {
            namespace = requestNamespace == null ? "" : requestNamespace;
            meta.addProperty("namespace", namespace);
        }
        Settings s = settings.get();
        Map<String, String> labels = Pods.stringMap(pod, "metadata", "labels");
        Map<String, String> annotations = Pods.stringMap(pod, "metadata", "annotations");
        boolean hostNetwork = pod.has("spec") && pod.getAsJsonObject("spec").has("hostNetwork")
                && pod.getAsJsonObject("spec").get("hostNetwork").getAsBoolean();
        var decision = InjectionPolicy.decide(s.config(), namespace, namespaceLabels.apply(namespace), labels, annotations,
                hostNetwork, revision, revisionOf);
        if (!decision.inject()) {
            return new Outcome(Kind.SKIPPED, null, decision.reason(), List.of());
        }
        List<String> templates = s.config().templatesFor(annotations);
        for (String name : templates) {
            SortedSet<String> known = s.config().knownTemplateNames();
            if (!known.contains(name)) {
                return new Outcome(Kind.FAILED, null, TEMPLATE_FAILED + "requested template \"" + name
                        + "\" not found; have " + String.join(", ", known), List.of());
            }
        }
        List<String> unrendered = templates.stream()
                .filter(t -> !RENDERED_TEMPLATES.contains(t) && StaticTemplate.of(s.config().templates().get(t)) == null).distinct()
                .map(t -> "\"" + t + "\"").toList();
        if (!unrendered.isEmpty()) {
            return new Outcome(Kind.UNSUPPORTED_TEMPLATE, null, TEMPLATE_FAILED + "MeshPilot does not render the injection "
                    + (unrendered.size() == 1 ? "template " : "templates ") + String.join(", ", unrendered)
                    + " (it renders istiod's " + RENDERED_NAMES + " templates, and templates without Go template actions)",
                    List.of());
        }
        // the patch is made from the pod without managedFields and with its namespace, as istiod's:
        // it leaves both alone in the stored pod
        JsonObject patchBase = pod.deepCopy();
        try {
            JsonObject injected = injected(pod, s, path, templates.stream().distinct().toList());
            return new Outcome(Kind.INJECTED, PodPatch.diff(patchBase, injected), "injected", List.of());
        } catch (IllegalArgumentException e) {
            return new Outcome(Kind.FAILED, null, "Pod injection failed: " + e.getMessage(), List.of());
        }
    }

    private JsonObject injected(JsonObject pod, Settings s, String path, List<String> templates) {
        MeshConfig m = mesh.get();
        Map<String, String> annotations = Pods.stringMap(pod, "metadata", "annotations");
        InjectionAnnotations.check(annotations);
        ProxyConfig proxyConfig = effectiveProxyConfig(m.getDefaultConfig(), annotations.get("proxy.istio.io/config"));
        int meshStatusPort = m.getDefaultConfig().getStatusPort() == 0 ? 15020 : m.getDefaultConfig().getStatusPort();
        String earlierProbers = earlierProbers(pod);
        strip(pod, meshStatusPort);
        annotations = Pods.stringMap(pod, "metadata", "annotations");
        InjectionValues values = s.values();
        SidecarTemplate.Input input = new SidecarTemplate.Input(pod, values,
                proxyConfig.getProxyMetadataMap(), proxyConfigJson(proxyConfig), proxyConfig.getInterceptionMode().name(),
                proxyConfig.hasHoldApplicationUntilProxyStarts() && proxyConfig.getHoldApplicationUntilProxyStarts().getValue(),
                m.getTrustDomain(), m.getInboundTrafficPolicy().getMode().name().equals("LOCALHOST"), nativeSidecars,
                revision, deployMeta(pod), OtelResourceAttributes.of(m, pod, deployMeta(pod).namespace()));
        SidecarTemplate sidecar = new SidecarTemplate(input);
        JsonObject templatePod = null;
        for (String name : templates) {
            JsonObject rendered = switch (name) {
                case InjectorConfig.SIDECAR_TEMPLATE -> sidecar.render();
                case GatewayTemplate.NAME -> new GatewayTemplate(input).render();
                case GrpcTemplates.AGENT -> new GrpcTemplates(input).renderAgent();
                case GrpcTemplates.SIMPLE -> new GrpcTemplates(input).renderSimple();
                default -> StaticTemplate.of(s.config().templates().get(name)); // checked above: static text
            };
            templatePod = templatePod == null ? rendered : combine(templatePod, rendered);
        }
        boolean nativeSidecar = templates.contains(InjectorConfig.SIDECAR_TEMPLATE) && sidecar.nativeSidecar();
        JsonObject userProxy = Pods.named(Pods.array(pod, "containers"), SidecarTemplate.PROXY);
        if (userProxy == null) {
            userProxy = Pods.named(Pods.array(pod, "initContainers"), SidecarTemplate.PROXY);
        }
        userProxy = userProxy == null ? null : userProxy.deepCopy();
        merge(pod, templatePod, nativeSidecar);
        adjustInitContainerUser(pod, userProxy, proxyConfig.getInterceptionMode().name().equals("TPROXY")
                || "TPROXY".equals(annotations.get("sidecar.istio.io/interceptionMode")));

        Map<String, String> proxyEnvs = pathEnvs(path);
        String network = SidecarTemplate.firstNonEmpty(proxyEnvs.get("ISTIO_META_NETWORK"), values.string("global.network"));
        network = Pods.stringMap(pod, "metadata", "labels").getOrDefault("topology.istio.io/network", network);
        JsonObject proxy = proxyContainer(pod);
        if (proxy == null) {
            // grpc-simple: no agent, so no cluster, network or probe settings; the metrics annotations as for any pod
            prometheusMerge(pod, null, m, meshStatusPort);
            finish(pod, s, templatePod, proxyConfig, values);
            return pod;
        }
        Map<String, String> clusterEnvs = new TreeMap<>();
        String cluster = SidecarTemplate.firstNonEmpty(proxyEnvs.get("ISTIO_META_CLUSTER_ID"),
                values.string("global.multiCluster.clusterName"));
        if (!cluster.isEmpty()) {
            clusterEnvs.put("ISTIO_META_CLUSTER_ID", cluster);
        }
        if (!network.isEmpty()) {
            clusterEnvs.put("ISTIO_META_NETWORK", network);
        }
        updateClusterEnvs(proxy, clusterEnvs);
        prometheusMerge(pod, proxy, m, meshStatusPort);
        boolean rewrite = values.truthy("sidecarInjectorWebhook.rewriteAppHTTPProbe");
        // read after the merge: the gRPC templates turn the rewrite off with this annotation
        String rewriteAnnotation = Pods.stringMap(pod, "metadata", "annotations").get("sidecar.istio.io/rewriteAppHTTPProbers");
        if (rewriteAnnotation != null && (rewriteAnnotation.equalsIgnoreCase("true") || rewriteAnnotation.equalsIgnoreCase("false"))) {
            rewrite = Boolean.parseBoolean(rewriteAnnotation);
        }
        if (rewrite) {
            int statusPort = annotations.containsKey("status.sidecar.istio.io/port")
                    ? parsePort(annotations.get("status.sidecar.istio.io/port")) : meshStatusPort;
            String probers = AppProbes.merge(AppProbes.dump(pod, meshStatusPort), earlierProbers);
            if (probers != null) {
                proxy.getAsJsonArray("env").add(SidecarTemplate.env("ISTIO_KUBE_APP_PROBERS", probers));
            }
            AppProbes.rewrite(pod, statusPort);
        }
        JsonObject podLabels = Pods.object(pod, "metadata", "labels");
        if (!network.isEmpty() && (proxyEnvs.containsKey("ISTIO_META_NETWORK") || !values.string("global.network").isEmpty())) {
            podLabels.addProperty("topology.istio.io/network", network);
        }
        finish(pod, s, templatePod, proxyConfig, values);
        return pod;
    }

    /** The status annotation, the configured annotations and istiod's container order. */
    private void finish(JsonObject pod, Settings s, JsonObject templatePod, ProxyConfig proxyConfig, InjectionValues values) {
        JsonObject podAnnotations = Pods.object(pod, "metadata", "annotations");
        podAnnotations.addProperty(STATUS, status(templatePod));
        s.config().injectedAnnotations().forEach(podAnnotations::addProperty);
        boolean hold = proxyConfig.getHoldApplicationUntilProxyStarts().getValue()
                || values.truthy("global.proxy.holdApplicationUntilProxyStarts");
        reorder(pod, hold);
    }

    /** Several templates (inject.istio.io/templates: a,b) laid one over the other, as istiod overlays their output. */
    private static JsonObject combine(JsonObject first, JsonObject next) {
        JsonObject out = first.deepCopy();
        for (String part : List.of("labels", "annotations")) {
            JsonObject into = Pods.object(out, "metadata", part);
            Pods.object(next, "metadata", part).entrySet().forEach(e -> into.add(e.getKey(), e.getValue()));
        }
        JsonObject spec = Pods.object(out, "spec");
        for (var e : Pods.object(next, "spec").entrySet()) {
            JsonElement mine = spec.get(e.getKey());
            if (mine != null && mine.isJsonArray() && e.getValue().isJsonArray()) {
                for (JsonElement item : e.getValue().getAsJsonArray()) {
                    JsonObject same = Pods.named(mine.getAsJsonArray(), Pods.string(item.getAsJsonObject(), "name"));
                    if (same == null) {
                        mine.getAsJsonArray().add(item);
                    } else {
                        overlay(same, item.getAsJsonObject());
                    }
                }
            } else if (mine != null && mine.isJsonObject() && e.getValue().isJsonObject()) {
                overlay(mine.getAsJsonObject(), e.getValue().getAsJsonObject());
            } else {
                spec.add(e.getKey(), e.getValue());
            }
        }
        return out;
    }

    private static int parsePort(String s) {
        try {
            return Integer.parseInt(s.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("annotation status.sidecar.istio.io/port=" + s + " is not a port");
        }
    }

    /** The mesh's default proxy config with the pod's proxy.istio.io/config (YAML or JSON) merged over it. */
    static ProxyConfig effectiveProxyConfig(ProxyConfig meshDefault, String annotation) {
        if (annotation == null || annotation.isBlank()) {
            return meshDefault;
        }
        try {
            Object yaml = new Yaml(new SafeConstructor(new LoaderOptions())).load(annotation);
            ProxyConfig.Builder given = ProxyConfig.newBuilder();
            JsonFormat.parser().merge(new Gson().toJson(yaml), given);
            // what the annotation sets replaces the mesh's value, even a zero; maps (proxyMetadata) are merged
            ProxyConfig.Builder b = meshDefault.toBuilder();
            for (Map.Entry<FieldDescriptor, Object> e : given.build().getAllFields().entrySet()) {
                if (e.getKey().isMapField()) {
                    for (Object entry : (List<?>) e.getValue()) {
                        b.addRepeatedField(e.getKey(), entry);
                    }
                } else {
                    b.setField(e.getKey(), e.getValue());
                }
            }
            return b.build();
        } catch (InvalidProtocolBufferException | RuntimeException e) {
            throw new IllegalArgumentException("annotation proxy.istio.io/config: " + e.getMessage(), e);
        }
    }

    /** istiod's protoToJSON(cleanProxyConfig): the proxy config without the fields that equal Istio's defaults. */
    public static String proxyConfigJson(ProxyConfig pc) {
        ProxyConfig.Builder b = pc.toBuilder();
        for (Map.Entry<FieldDescriptor, Object> e : pc.getAllFields().entrySet()) {
            FieldDescriptor f = e.getKey();
            boolean defaultPresent = f.isRepeated() || !f.hasPresence() || PROXY_DEFAULTS.hasField(f);
            if (defaultPresent && e.getValue().equals(PROXY_DEFAULTS.getField(f))) {
                b.clearField(f);
            }
        }
        try {
            // map keys (proxyMetadata) sorted, as istiod's Go marshalling writes them
            return JsonFormat.printer().omittingInsignificantWhitespace().sortingMapKeys().print(b.build());
        } catch (InvalidProtocolBufferException e) {
            return "{}";
        }
    }

    /**
     * The ISTIO_KUBE_APP_PROBERS of an earlier injection: its probes already point at the
     * agent, so only this remembers where they went.
     */
    private static String earlierProbers(JsonObject pod) {
        if (!Pods.stringMap(pod, "metadata", "annotations").containsKey(STATUS)) {
            return null;
        }
        for (String field : new String[] {"containers", "initContainers"}) {
            JsonObject proxy = Pods.named(Pods.array(pod, field), SidecarTemplate.PROXY);
            if (proxy != null && proxy.has("env")) {
                JsonObject e = Pods.named(proxy.getAsJsonArray("env"), "ISTIO_KUBE_APP_PROBERS");
                if (e != null) {
                    return Pods.string(e, "value");
                }
            }
        }
        return null;
    }

    /** Removes an earlier injection (the containers its status annotation names) so injecting again is idempotent. */
    private static void strip(JsonObject pod, int meshStatusPort) {
        JsonObject annotations = Pods.object(pod, "metadata", "annotations");
        JsonElement status = annotations.get(STATUS);
        if (status == null) {
            return;
        }
        try {
            JsonObject st = JsonParser.parseString(status.getAsString()).getAsJsonObject();
            for (String field : new String[] {"containers", "initContainers"}) {
                JsonElement names = st.get(field);
                if (names != null && names.isJsonArray()) {
                    names.getAsJsonArray().forEach(n -> Pods.removeNamed(Pods.array(pod, field), n.getAsString()));
                }
            }
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, "unreadable " + STATUS + ": " + e.getMessage());
        }
        if (String.valueOf(meshStatusPort).equals(prometheus(annotations, "port"))) {
            clearPrometheus(annotations);
        }
        annotations.remove(STATUS);
        reinsertOverrides(pod, annotations);
    }

    /** istiod's reinsertOverrides: the user's own istio-* containers of the first injection, back for this one. */
    private static void reinsertOverrides(JsonObject pod, JsonObject annotations) {
        JsonElement saved = annotations.get(OVERRIDES);
        if (saved == null) {
            return;
        }
        JsonObject overrides;
        try {
            overrides = JsonParser.parseString(saved.getAsString()).getAsJsonObject();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("annotation " + OVERRIDES + " is not JSON: " + e.getMessage(), e);
        }
        for (String field : new String[] {"containers", "initContainers"}) {
            JsonElement list = overrides.get(field);
            if (list == null || !list.isJsonArray()) {
                continue;
            }
            JsonObject spec = Pods.object(pod, "spec");
            if (!spec.has(field)) {
                spec.add(field, new JsonArray());
            }
            for (JsonElement c : list.getAsJsonArray()) {
                if (Pods.named(spec.getAsJsonArray(field), Pods.string(c.getAsJsonObject(), "name")) == null) {
                    spec.getAsJsonArray(field).add(c.deepCopy());
                }
            }
        }
    }

    private static String prometheus(JsonObject annotations, String what) {
        for (var e : annotations.entrySet()) {
            if (e.getKey().replaceAll("[^a-zA-Z0-9_]", "_").equals("prometheus_io_" + what)) {
                return e.getValue().getAsString();
            }
        }
        return null;
    }

    private static void clearPrometheus(JsonObject annotations) {
        for (String k : new ArrayList<>(annotations.keySet())) {
            String sanitized = k.replaceAll("[^a-zA-Z0-9_]", "_");
            if (sanitized.equals("prometheus_io_port") || sanitized.equals("prometheus_io_path")
                    || sanitized.equals("prometheus_io_scrape") || sanitized.equals(SCRAPE_TARGETS)) {
                annotations.remove(k);
            }
        }
    }

    /**
     * {@code prometheus.istio.io/scrape-targets} ({@code port:path,...}, the path /metrics when
     * left out) as the agent reads it; an entry without a port makes the whole annotation
     * ignored, as istiod warns and ignores it.
     */
    private static JsonArray scrapeTargets(JsonObject annotations) {
        JsonArray targets = new JsonArray();
        for (var e : annotations.entrySet()) {
            if (!e.getKey().replaceAll("[^a-zA-Z0-9_]", "_").equals(SCRAPE_TARGETS)) {
                continue;
            }
            for (String entry : e.getValue().getAsString().split(",")) {
                if (entry.isBlank()) {
                    continue;
                }
                String[] parts = entry.strip().split(":", 2);
                if (parts[0].isBlank()) {
                    LOG.log(System.Logger.Level.WARNING, "failed to parse " + e.getKey() + " annotation: empty port in scrape target \""
                            + entry.strip() + "\"");
                    return new JsonArray();
                }
                JsonObject t = new JsonObject();
                t.addProperty("port", parts[0].strip());
                t.addProperty("path", parts.length == 2 && !parts[1].isBlank() ? parts[1].strip() : "/metrics");
                targets.add(t);
            }
        }
        return targets;
    }

    /** A port the agent is to scrape: a number, not the agent's own port, not one the data plane owns. */
    private static void checkScrapePort(String prefix, String what, String port, String agentPort) {
        int n;
        try {
            n = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            n = 0;
        }
        if (n < 1 || n > 65535) {
            throw new IllegalArgumentException(prefix + "invalid " + what + " \"" + port + "\"");
        }
        String canonical = Integer.toString(n);
        if (canonical.equals(agentPort)) {
            throw new IllegalArgumentException(prefix + what + " " + port + " conflicts with agent port");
        }
        String reserved = ISTIO_RESERVED_PORTS.get(canonical);
        if (reserved != null) {
            throw new IllegalArgumentException(prefix + what + " " + port + " is reserved for Istio (" + reserved
                    + ") and cannot be scraped");
        }
    }

    /** istiod's applyPrometheusMerge: the agent serves merged metrics on the status port. */
    private static void prometheusMerge(JsonObject pod, JsonObject proxy, MeshConfig mesh, int meshStatusPort) {
        JsonObject annotations = Pods.object(pod, "metadata", "annotations");
        String scrape = prometheus(annotations, "scrape");
        if (scrape != null && (scrape.equalsIgnoreCase("false") || scrape.equals("0"))) {
            return;
        }
        boolean merge = !mesh.hasEnablePrometheusMerge() || mesh.getEnablePrometheusMerge().getValue();
        JsonElement podMerge = annotations.get("prometheus.istio.io/merge-metrics");
        if (podMerge != null && (podMerge.getAsString().equalsIgnoreCase("true") || podMerge.getAsString().equalsIgnoreCase("false"))) {
            merge = Boolean.parseBoolean(podMerge.getAsString());
        }
        String target = String.valueOf(meshStatusPort);
        if (!merge || target.equals(prometheus(annotations, "port"))) {
            return;
        }
        String path = prometheus(annotations, "path");
        String port = prometheus(annotations, "port");
        JsonArray targets = scrapeTargets(annotations);
        if (!targets.isEmpty()) {
            // agents that do not know targets still scrape the first one
            port = targets.get(0).getAsJsonObject().get("port").getAsString();
            path = targets.get(0).getAsJsonObject().get("path").getAsString();
            for (JsonElement t : targets) {
                checkScrapePort("invalid prometheus scrape targets: ", "target port",
                        t.getAsJsonObject().get("port").getAsString(), target);
            }
        } else if (port != null && !port.isEmpty()) {
            checkScrapePort("invalid prometheus scrape configuration: ", "port", port, target);
        }
        if (proxy != null && (scrape != null || path != null || port != null || !targets.isEmpty())) {
            JsonObject conf = new JsonObject();
            conf.addProperty("scrape", scrape == null ? "" : scrape);
            conf.addProperty("path", path == null ? "" : path);
            conf.addProperty("port", port == null ? "" : port);
            if (!targets.isEmpty()) {
                conf.add("targets", targets);
            }
            proxy.getAsJsonArray("env").add(SidecarTemplate.env("ISTIO_PROMETHEUS_ANNOTATIONS", conf.toString()));
        }
        clearPrometheus(annotations);
        annotations.addProperty("prometheus.io/port", target);
        annotations.addProperty("prometheus.io/path", "/stats/prometheus");
        annotations.addProperty("prometheus.io/scrape", "true");
    }

    /** Merges the template pod into the pod: template labels, annotations, containers and volumes over the pod's. */
    private static void merge(JsonObject pod, JsonObject template, boolean nativeSidecar) {
        boolean alreadyInjected = Pods.stringMap(pod, "metadata", "annotations").containsKey(OVERRIDES);
        Map<String, JsonArray> overrides = new LinkedHashMap<>();
        JsonObject labels = Pods.object(pod, "metadata", "labels");
        template.getAsJsonObject("metadata").getAsJsonObject("labels").entrySet().forEach(e -> labels.add(e.getKey(), e.getValue()));
        JsonObject annotations = Pods.object(pod, "metadata", "annotations");
        template.getAsJsonObject("metadata").getAsJsonObject("annotations").entrySet()
                .forEach(e -> annotations.add(e.getKey(), e.getValue()));
        JsonObject spec = Pods.object(pod, "spec");
        JsonObject tspec = template.getAsJsonObject("spec");
        if (!spec.has("containers")) {
            spec.add("containers", new JsonArray());
        }
        if (nativeSidecar) {
            // a user's istio-proxy customisation written under containers follows the proxy into initContainers
            JsonObject custom = Pods.named(spec.getAsJsonArray("containers"), SidecarTemplate.PROXY);
            if (custom != null && Pods.named(tspec.getAsJsonArray("initContainers"), SidecarTemplate.PROXY) != null) {
                Pods.removeNamed(spec.getAsJsonArray("containers"), SidecarTemplate.PROXY);
                if (!spec.has("initContainers")) {
                    spec.add("initContainers", new JsonArray());
                }
                spec.getAsJsonArray("initContainers").add(custom);
            }
        }
        for (String field : new String[] {"initContainers", "containers"}) {
            JsonArray added = tspec.getAsJsonArray(field);
            if (added.isEmpty()) {
                continue;
            }
            if (!spec.has(field)) {
                spec.add(field, new JsonArray());
            }
            JsonArray list = spec.getAsJsonArray(field);
            for (JsonElement c : added) {
                String name = Pods.string(c.getAsJsonObject(), "name");
                JsonObject user = Pods.named(list, name);
                if (user == null) {
                    list.add(c);
                } else {
                    // the pod's own fields for an injected container are overrides, as istiod treats them
                    JsonObject override = user.deepCopy();
                    if ("auto".equals(Pods.string(override, "image"))) {
                        override.remove("image"); // "auto": the injector's image
                    }
                    JsonObject recorded = override.deepCopy();
                    if (!recorded.has("resources")) {
                        recorded.add("resources", new JsonObject()); // as Go writes a Container
                    }
                    canonicalResources(recorded);
                    overrides.computeIfAbsent(field, f -> new JsonArray()).add(GoFieldOrder.container(recorded));
                    JsonObject merged = overlay(c.getAsJsonObject().deepCopy(), override);
                    canonicalResources(merged);
                    for (int i = 0; i < list.size(); i++) {
                        if (name.equals(Pods.string(list.get(i).getAsJsonObject(), "name"))) {
                            list.set(i, merged);
                        }
                    }
                }
            }
        }
        if (!alreadyInjected && !overrides.isEmpty()) {
            JsonObject o = new JsonObject();
            for (String field : new String[] {"containers", "initContainers"}) {
                if (overrides.containsKey(field)) {
                    o.add(field, overrides.get(field));
                }
            }
            annotations.addProperty(OVERRIDES, o.toString());
        }
        if (tspec.has("securityContext")) {
            // the gateway template's pod security context (its unprivileged-port sysctl) over the pod's own
            overlay(Pods.object(spec, "securityContext"), tspec.getAsJsonObject("securityContext"));
        }
        for (String field : new String[] {"volumes", "imagePullSecrets"}) {
            JsonArray added = tspec.has(field) ? tspec.getAsJsonArray(field) : new JsonArray();
            if (added.isEmpty()) {
                continue;
            }
            if (!spec.has(field)) {
                spec.add(field, new JsonArray());
            }
            // as a strategic merge with the template as the patch: the template's entries first, then the pod's
            // own (a pod's volume of the same name is kept as the pod has it)
            JsonArray own = spec.getAsJsonArray(field);
            JsonArray list = new JsonArray();
            for (JsonElement v : added) {
                JsonObject mine = Pods.named(own, Pods.string(v.getAsJsonObject(), "name"));
                list.add(mine != null ? mine : v);
            }
            for (JsonElement v : own) {
                if (Pods.named(added, Pods.string(v.getAsJsonObject(), "name")) == null) {
                    list.add(v);
                }
            }
            spec.add(field, list);
        }
    }

    /** The API server stores quantities canonically ({@code 3000m} as {@code 3}); so do the injected containers. */
    private static void canonicalResources(JsonObject container) {
        JsonElement r = container.get("resources");
        if (r == null || !r.isJsonObject()) {
            return;
        }
        for (String kind : new String[] {"limits", "requests"}) {
            JsonElement q = r.getAsJsonObject().get(kind);
            if (q != null && q.isJsonObject()) {
                for (var e : q.getAsJsonObject().entrySet()) {
                    if (e.getValue().isJsonPrimitive()) {
                        e.setValue(new JsonPrimitive(ResourceQuantities.canonical(e.getValue().getAsString())));
                    }
                }
            }
        }
    }

    /**
     * istiod's adjustInitContainerUser: a user-set runAsUser on istio-proxy is the uid the
     * iptables rules exempt ({@code -u}); with CNI the validation container runs as it too.
     */
    static void adjustInitContainerUser(JsonObject pod, JsonObject userProxy, boolean tproxy) {
        if (userProxy == null || !userProxy.has("securityContext")) {
            return;
        }
        JsonObject userSc = userProxy.getAsJsonObject("securityContext");
        JsonElement uid = userSc.get("runAsUser");
        JsonElement gid = userSc.get("runAsGroup");
        if (uid == null && gid == null) {
            return;
        }
        JsonArray inits = Pods.array(pod, "initContainers");
        JsonObject init = Pods.named(inits, SidecarTemplate.INIT);
        if (init == null) {
            init = Pods.named(inits, SidecarTemplate.VALIDATION);
        }
        if (init == null) {
            return;
        }
        if (tproxy && uid != null) {
            proxyContainer(pod).getAsJsonObject("securityContext").addProperty("runAsUser", 0);
        }
        if (!tproxy && SidecarTemplate.VALIDATION.equals(Pods.string(init, "name"))) {
            JsonObject sc = Pods.object(init, "securityContext");
            if (uid != null) {
                sc.add("runAsUser", uid);
            }
            if (gid != null) {
                sc.add("runAsGroup", gid);
            }
        }
        if (uid == null || uid.getAsLong() == 0 || !init.has("args")) {
            return;
        }
        JsonArray args = init.getAsJsonArray("args");
        for (int i = 0; i + 1 < args.size(); i++) {
            if (args.get(i).getAsString().equals("-u")) {
                args.set(i + 1, new JsonPrimitive(uid.getAsString()));
                return;
            }
        }
    }

    /** A strategic-merge-like overlay: objects merged, env/volumeMounts/ports merged by key, other lists replaced. */
    static JsonObject overlay(JsonObject base, JsonObject top) {
        for (var e : top.entrySet()) {
            JsonElement b = base.get(e.getKey());
            JsonElement t = e.getValue();
            String key = switch (e.getKey()) {
                case "env" -> "name";
                case "volumeMounts" -> "mountPath";
                case "ports" -> "containerPort";
                default -> null;
            };
            if (b != null && b.isJsonObject() && t.isJsonObject()) {
                overlay(b.getAsJsonObject(), t.getAsJsonObject());
            } else if (b != null && b.isJsonArray() && t.isJsonArray() && key != null) {
                JsonArray list = b.getAsJsonArray();
                for (JsonElement item : t.getAsJsonArray()) {
                    JsonElement k = item.getAsJsonObject().get(key);
                    boolean replaced = false;
                    for (int i = 0; i < list.size(); i++) {
                        if (Objects.equals(list.get(i).getAsJsonObject().get(key), k)) {
                            list.set(i, item);
                            replaced = true;
                        }
                    }
                    if (!replaced) {
                        list.add(item);
                    }
                }
            } else {
                base.add(e.getKey(), t);
            }
        }
        return base;
    }

    private static JsonObject proxyContainer(JsonObject pod) {
        JsonObject c = Pods.named(Pods.array(pod, "containers"), SidecarTemplate.PROXY);
        if (c == null) {
            c = Pods.named(Pods.array(pod, "initContainers"), SidecarTemplate.PROXY);
        }
        if (c != null && !c.has("env")) {
            c.add("env", new JsonArray());
        }
        return c;
    }

    /** istiod's updateClusterEnvs: the cluster and network variables moved to the end of the proxy's env, by name. */
    private static void updateClusterEnvs(JsonObject container, Map<String, String> envs) {
        JsonArray env = container.getAsJsonArray("env");
        envs.keySet().forEach(name -> Pods.removeNamed(env, name));
        envs.forEach((name, value) -> env.add(SidecarTemplate.env(name, value)));
    }

    /** istiod's status annotation: what the template injected, for a later re-injection to remove. */
    private String status(JsonObject templatePod) {
        JsonObject spec = templatePod.getAsJsonObject("spec");
        StringBuilder b = new StringBuilder("{");
        b.append("\"initContainers\":").append(names(spec.getAsJsonArray("initContainers")));
        b.append(",\"containers\":").append(names(spec.getAsJsonArray("containers")));
        b.append(",\"volumes\":").append(names(spec.getAsJsonArray("volumes")));
        b.append(",\"imagePullSecrets\":").append(names(spec.has("imagePullSecrets") ? spec.getAsJsonArray("imagePullSecrets") : null));
        b.append(",\"revision\":").append(new Gson().toJson(revision.isEmpty() ? "default" : revision));
        return b.append("}").toString();
    }

    private static String names(JsonArray list) {
        if (list == null || list.isEmpty()) {
            return "null";
        }
        JsonArray n = new JsonArray();
        list.forEach(e -> n.add(Pods.string(e.getAsJsonObject(), "name")));
        return n.toString();
    }

    /** istiod's reorderPod. */
    private static void reorder(JsonObject pod, boolean holdApplication) {
        JsonObject spec = pod.getAsJsonObject("spec");
        move(spec.getAsJsonArray("containers"), SidecarTemplate.PROXY, holdApplication);
        JsonArray inits = spec.has("initContainers") ? spec.getAsJsonArray("initContainers") : null;
        if (inits == null) {
            return;
        }
        if (Pods.named(inits, SidecarTemplate.PROXY) != null) {
            move(inits, "enable-core-dump", true);
            move(inits, SidecarTemplate.PROXY, true);
            move(inits, SidecarTemplate.VALIDATION, true);
            move(inits, SidecarTemplate.INIT, true);
        } else {
            move(inits, SidecarTemplate.VALIDATION, true);
            move(inits, SidecarTemplate.INIT, false);
            move(inits, "enable-core-dump", false);
        }
    }

    private static void move(JsonArray list, String name, boolean first) {
        JsonObject c = Pods.named(list, name);
        if (c == null) {
            return;
        }
        Pods.removeNamed(list, name);
        if (first) {
            list.asList().addFirst(c);
        } else {
            list.add(c);
        }
    }

    /** Who owns the pod: istiod's GetDeployMetaFromPod. */
    static SidecarTemplate.DeployMeta deployMeta(JsonObject pod) {
        String name = Pods.string(pod, "metadata", "name");
        String namespace = Pods.string(pod, "metadata", "namespace");
        String apiVersion = "v1";
        String kind = "Pod";
        Map<String, String> labels = Pods.stringMap(pod, "metadata", "labels");
        if (!Pods.string(pod, "metadata", "generateName").isEmpty()) {
            JsonElement refs = pod.getAsJsonObject("metadata").get("ownerReferences");
            if (refs != null && refs.isJsonArray()) {
                for (JsonElement r : refs.getAsJsonArray()) {
                    JsonObject ref = r.getAsJsonObject();
                    if (!ref.has("controller") || !ref.get("controller").getAsBoolean()) {
                        continue;
                    }
                    apiVersion = Pods.string(ref, "apiVersion");
                    kind = Pods.string(ref, "kind");
                    name = Pods.string(ref, "name");
                    String hash = labels.getOrDefault("pod-template-hash", "");
                    if (kind.equals("ReplicaSet") && !hash.isEmpty() && name.endsWith(hash)) {
                        name = name.substring(0, name.length() - hash.length() - 1);
                        kind = "Deployment";
                    } else if (kind.equals("ReplicationController") && labels.containsKey("deploymentconfig")) {
                        name = labels.get("deploymentconfig");
                        kind = "DeploymentConfig";
                    } else if (kind.equals("Job")) {
                        var m = Pattern.compile("(.+)-\\d{8,10}").matcher(name);
                        if (m.matches()) {
                            name = m.group(1);
                            kind = "CronJob";
                            apiVersion = "batch/v1";
                        }
                    }
                    break;
                }
            }
        }
        if (name.isEmpty()) {
            name = Pods.string(pod, "metadata", "name");
        }
        return new SidecarTemplate.DeployMeta(name, namespace, apiVersion, kind);
    }

    /** istiod's parseInjectEnvs: {@code /inject/cluster/c1/net/n1} (slashes in values as --slash--). */
    static Map<String, String> pathEnvs(String path) {
        Map<String, String> envs = new LinkedHashMap<>();
        if (path == null) {
            return envs;
        }
        String p = path.endsWith("/") ? path.substring(0, path.length() - 1) : path;
        String[] parts = p.split("/", 3);
        if (parts.length < 3) {
            return envs;
        }
        List<String> items = new ArrayList<>();
        if (parts[2].startsWith(":ENV:")) {
            for (String pair : parts[2].split(":ENV:")) {
                String[] kv = pair.split("=", 2);
                if (kv.length == 2 && !kv[0].isEmpty()) {
                    items.add(kv[0]);
                    items.add(kv[1]);
                }
            }
        } else {
            String[] split = parts[2].split("/", -1);
            for (int i = 0; i < split.length; i++) {
                items.add(i % 2 == 1 ? split[i].replace("--slash--", "/") : split[i]);
            }
        }
        for (int i = 0; i + 1 < items.size(); i += 2) {
            String k = items.get(i);
            String env = switch (k) {
                case "cluster" -> "ISTIO_META_CLUSTER_ID";
                case "net" -> "ISTIO_META_NETWORK";
                default -> k.toUpperCase(Locale.ROOT);
            };
            envs.put(env, items.get(i + 1));
        }
        return envs;
    }
}
