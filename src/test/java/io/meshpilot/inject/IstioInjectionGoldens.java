package io.meshpilot.inject;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.UnaryOperator;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Istio's injection goldens (pkg/kube/inject/testdata/inject, copied into
 * src/test/resources/istio-inject) read as istiod's webhook test reads them: each injectable
 * document turned into the pod the API server would send (its {@code objectToPod}), and the
 * injected pod compared after its {@code normalizeAndCompareDeployments}.
 */
final class IstioInjectionGoldens {
    static final String DIR = "/istio-inject/";
    /** Nulls kept: a Helm null in an .iop.yaml removes a chart default. */
    private static final Gson GSON = new GsonBuilder().serializeNulls().create();
    private static final Set<String> INJECTABLE = Set.of("Deployment", "DeploymentConfig", "DaemonSet", "StatefulSet",
            "Job", "ReplicaSet", "ReplicationController", "CronJob", "Pod");

    /** One injectable document: the pod to inject and the namespace of the admission request. */
    record Part(JsonObject pod, String namespace) {
    }

    /** One case of istiod's TestInjection; {@code mesh} edits the mesh config as the case's {@code mesh} func does. */
    record GoldenCase(String in, String want, Map<String, Object> values, String valuesFile,
                      UnaryOperator<MeshConfig> mesh, boolean nativeSidecars, String expectedError) {
        GoldenCase {
            values = Map.copyOf(values);
            mesh = mesh == null ? UnaryOperator.identity() : mesh;
        }

        static GoldenCase of(String in, String want) {
            return new GoldenCase(in, want, Map.of(), null, null, true, null);
        }

        GoldenCase values(Map<String, Object> v) {
            return new GoldenCase(in, want, v, valuesFile, mesh, nativeSidecars, expectedError);
        }

        GoldenCase valuesFile(String file) {
            return new GoldenCase(in, want, values, file, mesh, nativeSidecars, expectedError);
        }

        GoldenCase mesh(UnaryOperator<MeshConfig> m) {
            return new GoldenCase(in, want, values, valuesFile, m, nativeSidecars, expectedError);
        }

        GoldenCase classicSidecars() {
            return new GoldenCase(in, want, values, valuesFile, mesh, false, expectedError);
        }

        static GoldenCase error(String in, String expectedError) {
            return new GoldenCase(in, null, Map.of(), null, null, true, expectedError);
        }

        /** The template the case's pods ask for (the annotation's text), "sidecar" when they ask for none. */
        String template() {
            JsonObject annotations = Pods.object(parts(in).getFirst().pod(), "metadata", "annotations");
            return annotations.has("inject.istio.io/templates")
                    ? annotations.get("inject.istio.io/templates").getAsString() : InjectorConfig.SIDECAR_TEMPLATE;
        }

        @Override
        public String toString() {
            return want != null ? want : in;
        }
    }

    private IstioInjectionGoldens() {
    }

    static String read(String file) {
        try (InputStream in = IstioInjectionGoldens.class.getResourceAsStream(DIR + file)) {
            if (in == null) {
                throw new IllegalArgumentException("no golden file " + file);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static boolean exists(String file) {
        return IstioInjectionGoldens.class.getResource(DIR + file) != null;
    }

    /** The YAML documents of a file as JSON (Go's sigs.k8s.io/yaml reads them into JSON the same way). */
    static List<JsonObject> documents(String file) {
        List<JsonObject> out = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(read(file))) {
            if (doc != null) {
                out.add(GSON.toJsonTree(doc).getAsJsonObject());
            }
        }
        return out;
    }

    /** The injectable parts of a file, Lists split into their items (istiod's splitYamlFile). */
    static List<Part> parts(String file) {
        List<Part> out = new ArrayList<>();
        for (JsonObject doc : documents(file)) {
            addParts(doc, out);
        }
        return out;
    }

    private static void addParts(JsonObject doc, List<Part> out) {
        String kind = Pods.string(doc, "kind");
        if (kind.equals("List")) {
            for (JsonElement item : list(doc, "items")) {
                addParts(item.getAsJsonObject(), out);
            }
        } else if (INJECTABLE.contains(kind)) {
            out.add(new Part(toPod(doc), Pods.string(doc, "metadata", "namespace")));
        }
    }

    /** The pod a controller would create from the object, with the owner reference istiod's test simulates. */
    static JsonObject toPod(JsonObject object) {
        String kind = Pods.string(object, "kind");
        String name = Pods.string(object, "metadata", "name");
        if (kind.equals("Pod")) {
            return object.deepCopy();
        }
        JsonObject spec = object.getAsJsonObject("spec");
        JsonObject template = kind.equals("CronJob")
                ? spec.getAsJsonObject("jobTemplate").getAsJsonObject("spec").getAsJsonObject("template")
                : spec.getAsJsonObject("template");
        JsonObject meta = template.has("metadata") ? template.getAsJsonObject("metadata").deepCopy() : new JsonObject();
        if (kind.equals("Deployment")) {
            owner(meta, name + "-fake", "apps/v1", "ReplicaSet");
            meta.addProperty("generateName", name + "-fake-");
            Pods.object(meta, "labels").addProperty("pod-template-hash", "fake");
        } else {
            owner(meta, name, Pods.string(object, "apiVersion"), kind);
        }
        JsonObject pod = new JsonObject();
        pod.add("metadata", meta);
        pod.add("spec", template.getAsJsonObject("spec").deepCopy());
        return pod;
    }

    private static JsonArray list(JsonObject o, String field) {
        return o.has(field) && o.get(field).isJsonArray() ? o.getAsJsonArray(field) : new JsonArray();
    }

    private static void owner(JsonObject meta, String name, String apiVersion, String kind) {
        meta.addProperty("generateName", name);
        JsonObject ref = new JsonObject();
        ref.addProperty("apiVersion", apiVersion);
        ref.addProperty("kind", kind);
        ref.addProperty("name", name);
        ref.addProperty("controller", true);
        JsonArray refs = new JsonArray();
        refs.add(ref);
        meta.add("ownerReferences", refs);
    }

    /**
     * A pod as istiod's test compares it: without the status annotation, and as a Go Pod
     * marshals it (nulls, empty objects and empty lists left out, quantities in canonical form).
     * {@code injected} marks our output, whose downward-API env drops its apiVersion as istiod's
     * comparison drops it from the containers of the pod it produced.
     */
    static JsonObject normalised(JsonObject pod, boolean injected) {
        JsonObject copy = pod.deepCopy();
        Pods.object(copy, "metadata", "annotations").remove(SidecarInjector.STATUS);
        if (injected) {
            for (JsonElement c : Pods.array(copy, "containers")) {
                for (JsonElement env : list(c.getAsJsonObject(), "env")) {
                    JsonObject e = env.getAsJsonObject();
                    if (e.has("valueFrom") && e.getAsJsonObject("valueFrom").has("fieldRef")) {
                        e.getAsJsonObject("valueFrom").getAsJsonObject("fieldRef").remove("apiVersion");
                    }
                }
            }
        }
        for (String list : List.of("containers", "initContainers")) {
            for (JsonElement c : Pods.array(copy, list)) {
                JsonObject resources = c.getAsJsonObject().getAsJsonObject("resources");
                for (String part : List.of("limits", "requests")) {
                    if (resources != null && resources.has(part) && resources.get(part).isJsonObject()) {
                        JsonObject q = resources.getAsJsonObject(part);
                        for (String key : List.copyOf(q.keySet())) {
                            if (q.get(key).isJsonPrimitive()) {
                                q.addProperty(key, ResourceQuantities.canonical(q.get(key).getAsString()));
                            }
                        }
                    }
                }
            }
        }
        return (JsonObject) withoutEmpty(copy, false);
    }

    /** Go's omitempty: empty strings go too, except as the values of maps (labels, annotations). */
    private static JsonElement withoutEmpty(JsonElement e, boolean keepEmptyString) {
        if (e.isJsonObject()) {
            JsonObject out = new JsonObject();
            boolean isMap = keepEmptyString;
            for (var entry : e.getAsJsonObject().entrySet()) {
                boolean childIsMap = entry.getKey().equals("labels") || entry.getKey().equals("annotations");
                JsonElement v = withoutEmpty(entry.getValue(), isMap || childIsMap);
                if (v != null) {
                    out.add(entry.getKey(), v);
                }
            }
            return out.isEmpty() ? null : out;
        }
        if (e.isJsonArray()) {
            JsonArray out = new JsonArray();
            for (JsonElement item : e.getAsJsonArray()) {
                JsonElement v = withoutEmpty(item, false);
                out.add(v == null ? new JsonObject() : v);
            }
            return out.isEmpty() ? null : out;
        }
        if (e.isJsonNull() || !keepEmptyString && e.getAsJsonPrimitive().isString() && e.getAsString().isEmpty()) {
            return null;
        }
        return e;
    }

    /** The first place two JSON trees differ, as a path with both values; null when equal. */
    static String firstDifference(String path, JsonElement want, JsonElement got) {
        if (Objects.equals(want, got)) {
            return null;
        }
        if (want != null && got != null && want.isJsonObject() && got.isJsonObject()) {
            var keys = new TreeSet<>(want.getAsJsonObject().keySet());
            keys.addAll(got.getAsJsonObject().keySet());
            for (String k : keys) {
                String d = firstDifference(path + "." + k, want.getAsJsonObject().get(k), got.getAsJsonObject().get(k));
                if (d != null) {
                    return d;
                }
            }
        }
        if (want != null && got != null && want.isJsonArray() && got.isJsonArray()
                && want.getAsJsonArray().size() == got.getAsJsonArray().size()) {
            for (int i = 0; i < want.getAsJsonArray().size(); i++) {
                String d = firstDifference(path + "[" + i + "]", want.getAsJsonArray().get(i), got.getAsJsonArray().get(i));
                if (d != null) {
                    return d;
                }
            }
        }
        return path + ": want " + clip(want) + " got " + clip(got);
    }

    private static String clip(JsonElement e) {
        String s = String.valueOf(e);
        return s.length() > 1500 ? s.substring(0, 1500) + "..." : s;
    }
}
