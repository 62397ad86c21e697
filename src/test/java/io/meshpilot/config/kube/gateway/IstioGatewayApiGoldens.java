package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonPrimitive;
import com.google.protobuf.Message;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.config.kube.gateway.GatewayServices.NamedPort;
import io.meshpilot.config.kube.gateway.GatewayServices.PolicyTarget;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.yaml.FieldError;
import io.meshpilot.config.yaml.ProtoYamlBinder;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Date;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads the cases of istiod's Gateway API conversion testdata (src/test/resources/istio-gateway-api,
 * see its SOURCE.md): the input as the conversion's {@link GatewayApiInputs} over
 * {@link IstiodConversionFixtures}, the generated Istio config of the {@code .yaml.golden} as
 * {@link Config}s, and the {@code .status.yaml.golden} as a status per object.
 */
final class IstioGatewayApiGoldens {
    private static final String DIRECTORY = "/istio-gateway-api/";
    /** The API groups of the objects istiod's gateway controller reads as Gateway API input. */
    private static final Set<String> GATEWAY_API_GROUPS = Set.of(GatewayApiKinds.GROUP, "gateway.networking.x-k8s.io",
            "inference.networking.k8s.io");
    /** Masked as istiod's TestStatusQueue.Dump masks it: the time is not stable. */
    private static final String LAST_TRANSITION_TIME = "lastTransitionTime";

    private IstioGatewayApiGoldens() {
    }

    /**
     * One case.
     *
     * @param notConverted      input objects istiod's test feeds its controller that {@link GatewayApiInputs}
     *                          has no place for, as {@code Kind namespace/name}
     * @param expectedConfigs   the golden's Istio config, in its order (istiod's: creation time, namespace, name)
     * @param goldenProblems    what of the golden MeshPilot's Istio API could not read, by kind: a part with any cannot match
     * @param expectedStatuses  by object, in the golden's order, {@code lastTransitionTime} masked
     */
    record GoldenCase(String name, GatewayApiInputs inputs, List<String> notConverted, List<Config> expectedConfigs,
                      Map<String, List<String>> goldenProblems, Map<ConfigKey, JsonObject> expectedStatuses) {
        /** What of the golden's config of {@code kind} could not be read. */
        List<String> goldenProblems(String kind) {
            return goldenProblems.getOrDefault(kind, List.of());
        }
    }

    /** The case names, in istiod's order. */
    static List<String> cases() {
        return resource("CASES").lines().map(String::strip).filter(l -> !l.isEmpty()).toList();
    }

    static GoldenCase load(String name) {
        List<GatewayApiObject> objects = new ArrayList<>();
        Map<String, Map<String, String>> namespaceLabels = new TreeMap<>();
        Map<String, Map<String, byte[]>> secrets = new LinkedHashMap<>(IstiodConversionFixtures.secrets());
        Map<String, Map<String, String>> configMaps = new LinkedHashMap<>(IstiodConversionFixtures.configMaps());
        List<String> notConverted = new ArrayList<>();
        List<PolicyTarget> policyTargets = new ArrayList<>();
        for (JsonObject doc : jsonDocuments(resource(name + ".yaml"))) {
            String apiVersion = string(doc, "apiVersion");
            String kind = string(doc, "kind");
            String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
            JsonObject meta = object(doc, "metadata");
            String namespace = string(meta, "namespace");
            String key = namespace + "/" + string(meta, "name");
            if (!namespace.isEmpty()) {
                namespaceLabels.put(namespace, IstiodConversionFixtures.namespaceLabels(namespace));
            }
            if (GATEWAY_API_GROUPS.contains(group)) {
                objects.add(GatewayApiObject.fromJson(doc));
            } else if (group.isEmpty() && kind.equals("Secret")) {
                secrets.put(key, secretData(doc));
            } else if (group.isEmpty() && kind.equals("ConfigMap")) {
                Map<String, String> data = new LinkedHashMap<>();
                object(doc, "data").entrySet().forEach(e -> data.put(e.getKey(), e.getValue().getAsString()));
                configMaps.put(key, data);
            } else if (group.isEmpty() && kind.equals(PolicyTarget.SERVICE)
                    || group.equals("networking.istio.io") && kind.equals(PolicyTarget.SERVICE_ENTRY)) {
                policyTargets.add(policyTarget(kind, meta, object(doc, "spec")));
            } else {
                notConverted.add(kind + " " + key);
            }
        }
        GatewayApiInputs inputs = new GatewayApiInputs(objects, namespaceLabels,
                IstiodConversionFixtures.services().withPolicyTargets(policyTargets), secrets, configMaps,
                IstiodConversionFixtures.settings());

        List<Config> expectedConfigs = new ArrayList<>();
        Map<String, List<String>> goldenProblems = new TreeMap<>();
        readIstioConfigs(name + ".yaml.golden", resource(name + ".yaml.golden"), expectedConfigs, goldenProblems);

        Map<ConfigKey, JsonObject> expectedStatuses = new LinkedHashMap<>();
        for (JsonObject doc : jsonDocuments(resource(name + ".status.yaml.golden"))) {
            JsonObject meta = object(doc, "metadata");
            expectedStatuses.put(new ConfigKey(string(doc, "kind"), string(meta, "namespace"), string(meta, "name")),
                    maskTransitionTimes(object(doc, "status")));
        }
        return new GoldenCase(name, inputs, notConverted, expectedConfigs, goldenProblems, expectedStatuses);
    }

    /**
     * A Kubernetes Service or ServiceEntry of the input as a policy target or route parent: its
     * hosts (a ServiceEntry's), named ports ({@code port} of a Service, {@code number} of a
     * ServiceEntry) and labels. The services backends reach are the fixture's model services, as
     * in istiod's test.
     */
    private static PolicyTarget policyTarget(String kind, JsonObject meta, JsonObject spec) {
        boolean serviceEntry = kind.equals(PolicyTarget.SERVICE_ENTRY);
        List<String> hosts = new ArrayList<>();
        if (serviceEntry && spec.has("hosts")) {
            spec.getAsJsonArray("hosts").forEach(h -> hosts.add(h.getAsString()));
        }
        List<NamedPort> ports = new ArrayList<>();
        if (spec.has("ports")) {
            for (JsonElement p : spec.getAsJsonArray("ports")) {
                JsonObject port = p.getAsJsonObject();
                ports.add(new NamedPort(string(port, "name"), port.get(serviceEntry ? "number" : "port").getAsInt()));
            }
        }
        Map<String, String> labels = new LinkedHashMap<>();
        object(meta, "labels").entrySet().forEach(e -> labels.put(e.getKey(), e.getValue().getAsString()));
        return new PolicyTarget(kind, string(meta, "namespace"), string(meta, "name"), hosts, ports, labels);
    }

    /** A copy of {@code status} with every {@code lastTransitionTime} value replaced by {@code fake}. */
    static JsonObject maskTransitionTimes(JsonObject status) {
        return withTransitionTimes(status, "fake");
    }

    /** A copy of {@code status} with every {@code lastTransitionTime} value replaced by {@code time}. */
    static JsonObject withTransitionTimes(JsonObject status, String time) {
        JsonObject copy = status.deepCopy();
        setTransitionTimes(copy, new JsonPrimitive(time));
        return copy;
    }

    private static void setTransitionTimes(JsonElement e, JsonPrimitive time) {
        if (e.isJsonArray()) {
            e.getAsJsonArray().forEach(element -> setTransitionTimes(element, time));
        } else if (e.isJsonObject()) {
            for (Map.Entry<String, JsonElement> field : e.getAsJsonObject().entrySet()) {
                if (field.getKey().equals(LAST_TRANSITION_TIME)) {
                    field.setValue(time);
                } else {
                    setTransitionTimes(field.getValue(), time);
                }
            }
        }
    }

    /**
     * The Istio config documents of a golden, read as MeshPilot reads Istio YAML (its proto binding) but
     * without ConfigParser's name validation or schema validation: istiod's generated names
     * ({@code gateway~istio-autogenerated-k8s-gateway~default}) are not DNS-1123 names. A field
     * MeshPilot's API lacks is a problem, not silently dropped, or a conversion missing it would match.
     */
    private static void readIstioConfigs(String source, String text, List<Config> configs,
                                         Map<String, List<String>> problems) {
        List<Node> docs;
        try {
            docs = SafeYaml.documents(source, text);
        } catch (YamlBindingException e) {
            problems.computeIfAbsent("", k -> new ArrayList<>()).add(source + ": " + e.getMessage());
            return;
        }
        List<JsonObject> jsonDocs = jsonDocuments(text); // the same documents, for their metadata
        ProtoYamlBinder binder = new ProtoYamlBinder();
        for (int i = 0; i < docs.size(); i++) {
            Map<String, Node> fields = fields(docs.get(i));
            JsonObject meta = object(jsonDocs.get(i), "metadata");
            GroupVersionKind gvk = GroupVersionKind.of(string(jsonDocs.get(i), "apiVersion"), string(jsonDocs.get(i), "kind"));
            String who = gvk.kind() + " " + string(meta, "namespace") + "/" + string(meta, "name");
            List<String> ofKind = problems.computeIfAbsent(gvk.kind(), k -> new ArrayList<>());
            Schema schema = Schemas.PILOT.forGvk(gvk).orElse(null);
            if (schema == null) {
                ofKind.add(who + ": MeshPilot has no schema for " + gvk);
                continue;
            }
            Message.Builder spec = schema.defaultSpec().newBuilderForType();
            try {
                if (fields.get("spec") != null) {
                    for (FieldError unknown : binder.bind(source, fields.get("spec"), spec, true)) {
                        ofKind.add(who + ": spec." + unknown.path() + " is not in MeshPilot's API");
                    }
                }
            } catch (YamlBindingException e) {
                ofKind.add(who + ": " + e.getMessage());
                continue;
            }
            String created = string(meta, "creationTimestamp");
            configs.add(new Config(gvk, string(meta, "name"), string(meta, "namespace"), stringMap(object(meta, "labels")),
                    stringMap(object(meta, "annotations")), "", 0, created.isEmpty() ? null : Instant.parse(created),
                    spec.build(), null));
        }
    }

    /** Every non-empty document of a YAML stream as JSON. */
    static List<JsonObject> jsonDocuments(String yaml) {
        LoaderOptions options = new LoaderOptions();
        options.setAllowDuplicateKeys(false);
        List<JsonObject> out = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(options)).loadAll(yaml)) {
            if (doc != null) {
                out.add(toJson(doc).getAsJsonObject());
            }
        }
        return out;
    }

    private static JsonElement toJson(Object yaml) {
        return switch (yaml) {
            case null -> JsonNull.INSTANCE;
            case Map<?, ?> map -> {
                JsonObject o = new JsonObject();
                map.forEach((k, v) -> o.add(String.valueOf(k), toJson(v)));
                yield o;
            }
            case List<?> list -> {
                JsonArray a = new JsonArray();
                list.forEach(v -> a.add(toJson(v)));
                yield a;
            }
            case Number n -> new JsonPrimitive(n);
            case Boolean b -> new JsonPrimitive(b);
            case Date d -> new JsonPrimitive(d.toInstant().toString());
            default -> new JsonPrimitive(yaml.toString());
        };
    }

    private static Map<String, Node> fields(Node doc) {
        Map<String, Node> out = new LinkedHashMap<>();
        if (doc instanceof MappingNode map) {
            for (NodeTuple t : map.getValue()) {
                if (t.getKeyNode() instanceof ScalarNode k) {
                    out.put(k.getValue(), t.getValueNode());
                }
            }
        }
        return out;
    }

    private static Map<String, byte[]> secretData(JsonObject secret) {
        Map<String, byte[]> data = new LinkedHashMap<>();
        object(secret, "data").entrySet().forEach(e -> data.put(e.getKey(),
                Base64.getMimeDecoder().decode(e.getValue().getAsString())));
        object(secret, "stringData").entrySet().forEach(e -> data.put(e.getKey(),
                e.getValue().getAsString().getBytes(StandardCharsets.UTF_8)));
        return data;
    }

    static JsonObject object(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    static String string(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    private static Map<String, String> stringMap(JsonObject o) {
        Map<String, String> m = new TreeMap<>();
        o.entrySet().forEach(e -> m.put(e.getKey(), e.getValue().isJsonNull() ? "" : e.getValue().getAsString()));
        return m;
    }

    static String resource(String name) {
        try (InputStream in = IstioGatewayApiGoldens.class.getResourceAsStream(DIRECTORY + name)) {
            if (in == null) {
                throw new IllegalArgumentException("no test resource " + DIRECTORY + name);
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
