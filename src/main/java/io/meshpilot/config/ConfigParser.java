package io.meshpilot.config;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.config.yaml.FieldError;
import io.meshpilot.config.yaml.ProtoYamlBinder;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import io.meshpilot.config.yaml.YamlPaths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * Reads Istio config documents (multi-document YAML, or JSON) into validated {@link Config}s.
 * Each document stands alone: a bad one is reported with its index, line, field path and
 * reason and the others still load. Documents of non-Istio kinds (Service, Deployment, ...)
 * are skipped, not errors.
 */
public final class ConfigParser {
    /** Kubernetes object names (DNS-1123 subdomain) and namespaces (DNS-1123 label). */
    private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Set<String> TOP_LEVEL = Set.of("apiVersion", "kind", "metadata", "spec", "status");
    public static final String DEFAULT_NAMESPACE = "default";

    private final Schemas schemas;
    private final ProtoYamlBinder binder = new ProtoYamlBinder();
    private final JsonFormat.Parser structParser = JsonFormat.parser();

    public ConfigParser(Schemas schemas) {
        this.schemas = schemas;
    }

    /** A document skipped because it is not Istio config. */
    public record Skipped(String source, int document, GroupVersionKind gvk, String name) {
    }

    /**
     * What a text held: the configs that loaded, the documents rejected, warnings about
     * accepted documents (kept apart from errors, as istiod does), the documents skipped, and
     * whether the text as a whole could not be read (then nothing loaded).
     */
    public record Result(List<Config> configs, List<DocumentError> errors, List<DocumentError> warnings,
                         List<Skipped> skipped, boolean unreadable) {
    }

    public Result parse(String source, String text) {
        List<Node> docs;
        try {
            docs = SafeYaml.documents(source, text);
        } catch (YamlBindingException e) {
            FieldError f = e.first();
            return new Result(List.of(), List.of(new DocumentError(source, 0, f.line(), "", "", "", f.path(), f.reason())),
                    List.of(), List.of(), true);
        }
        List<Config> configs = new ArrayList<>();
        List<DocumentError> errors = new ArrayList<>();
        List<DocumentError> warnings = new ArrayList<>();
        List<Skipped> skipped = new ArrayList<>();
        for (int i = 0; i < docs.size(); i++) {
            document(source, i, docs.get(i), configs, errors, warnings, skipped);
        }
        return new Result(configs, errors, warnings, skipped, false);
    }

    private void document(String source, int index, Node doc, List<Config> configs, List<DocumentError> errors,
                          List<DocumentError> warnings, List<Skipped> skipped) {
        if (!(doc instanceof MappingNode map)) {
            errors.add(new DocumentError(source, index, line(doc), "", "", "", "", "a config document must be an object"));
            return;
        }
        Map<String, Node> fields = new HashMap<>();
        for (NodeTuple t : map.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k) {
                fields.put(k.getValue(), t.getValueNode());
            }
        }
        String apiVersion = scalar(fields.get("apiVersion"));
        String kind = scalar(fields.get("kind"));
        if (apiVersion == null || kind == null) {
            errors.add(new DocumentError(source, index, line(doc), "", "", "", apiVersion == null ? "apiVersion" : "kind",
                    "missing or not a string"));
            return;
        }
        GroupVersionKind gvk = GroupVersionKind.of(apiVersion, kind);
        Map<String, Node> meta = mapping(fields.get("metadata"));
        String name = meta == null ? null : scalar(meta.get("name"));
        String namespace = meta == null ? null : scalar(meta.get("namespace"));
        String ns = namespace == null || namespace.isEmpty() ? DEFAULT_NAMESPACE : namespace;
        if (!gvk.group().endsWith("istio.io")) {
            skipped.add(new Skipped(source, index, gvk, name));
            return;
        }
        Schema schema = schemas.forGvk(gvk).orElse(null);
        String who = name == null ? "" : name;
        if (schema == null) {
            String reason = schemas.forKind(kind)
                    .map(s -> "version " + gvk.version() + " of " + kind + " is not served (served: " + s.versions() + ")")
                    .orElse("unknown kind " + kind + " in " + gvk.group());
            errors.add(new DocumentError(source, index, line(fields.get("apiVersion")), kind, ns, who, "apiVersion", reason));
            return;
        }
        List<ValidationResult.Issue> problems = new ArrayList<>();
        for (NodeTuple t : map.getValue()) {
            String key = scalar(t.getKeyNode());
            if (key == null || !TOP_LEVEL.contains(key)) {
                problems.add(new ValidationResult.Issue(key == null ? "" : key, "unknown field"));
            }
        }
        if (meta == null) {
            problems.add(new ValidationResult.Issue("metadata", "missing or not an object"));
        } else {
            if (name == null || name.isEmpty()) {
                problems.add(new ValidationResult.Issue("metadata.name", "missing"));
            } else if (name.length() > 253 || !NAME.matcher(name).matches()) {
                problems.add(new ValidationResult.Issue("metadata.name",
                        "\"" + name + "\" is not a valid name (lower case DNS-1123 subdomain)"));
            }
            if (!NAMESPACE.matcher(ns).matches() || ns.length() > 63) {
                problems.add(new ValidationResult.Issue("metadata.namespace",
                        "\"" + ns + "\" is not a valid namespace (DNS-1123 label)"));
            }
            if (schema.clusterScoped() && namespace != null && !namespace.isEmpty()) {
                problems.add(new ValidationResult.Issue("metadata.namespace", kind + " is cluster-scoped"));
            }
        }
        Map<String, String> labels = stringMap(meta == null ? null : meta.get("labels"), "metadata.labels", problems);
        Map<String, String> annotations = stringMap(meta == null ? null : meta.get("annotations"),
                "metadata.annotations", problems);
        Message.Builder spec = schema.defaultSpec().newBuilderForType();
        Node specNode = fields.get("spec");
        if (specNode != null) {
            try {
                binder.bind(source, specNode, spec);
            } catch (YamlBindingException e) {
                for (FieldError f : e.errors()) {
                    problems.add(new ValidationResult.Issue(f.path().isEmpty() ? "spec" : "spec." + f.path(), f.reason()));
                }
            }
        }
        Struct status = null;
        Node statusNode = fields.get("status");
        if (statusNode != null && !(statusNode instanceof ScalarNode s && s.getValue().isEmpty())) {
            try {
                Struct.Builder sb = Struct.newBuilder();
                structParser.merge(ProtoYamlBinder.toJson(statusNode), sb);
                status = sb.build();
            } catch (YamlBindingException | InvalidProtocolBufferException e) {
                problems.add(new ValidationResult.Issue("status", "must be an object"));
            }
        }
        if (problems.isEmpty()) {
            Config config = new Config(gvk, name, schema.clusterScoped() ? "" : ns, labels, annotations, "", 0, null,
                    spec.build(), status);
            Validation v = new Validation();
            schema.validator().validate(config, v);
            ValidationResult r = v.result();
            for (ValidationResult.Issue w : r.warnings()) {
                warnings.add(new DocumentError(source, index, YamlPaths.line(doc, w.path()), kind, ns, who, w.path(),
                        w.message()));
            }
            if (r.valid()) {
                configs.add(config);
                return;
            }
            problems.addAll(r.errors());
        }
        for (ValidationResult.Issue p : problems) {
            errors.add(new DocumentError(source, index, YamlPaths.line(doc, p.path()), kind, ns, who, p.path(), p.message()));
        }
    }

    private static Map<String, String> stringMap(Node node, String path, List<ValidationResult.Issue> problems) {
        if (node == null || (node instanceof ScalarNode s && s.getTag().getValue().endsWith(":null"))) {
            return Map.of();
        }
        if (!(node instanceof MappingNode map)) {
            problems.add(new ValidationResult.Issue(path, "must be a map of strings"));
            return Map.of();
        }
        Map<String, String> out = new HashMap<>();
        for (NodeTuple t : map.getValue()) {
            String k = scalar(t.getKeyNode());
            String v = scalar(t.getValueNode());
            if (k == null || v == null) {
                problems.add(new ValidationResult.Issue(path + (k == null ? "" : "." + k), "keys and values must be strings"));
            } else {
                out.put(k, v);
            }
        }
        return out;
    }

    private static Map<String, Node> mapping(Node node) {
        if (!(node instanceof MappingNode map)) {
            return null;
        }
        Map<String, Node> out = new HashMap<>();
        for (NodeTuple t : map.getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k) {
                out.put(k.getValue(), t.getValueNode());
            }
        }
        return out;
    }

    private static String scalar(Node n) {
        return n instanceof ScalarNode s && !s.getTag().getValue().endsWith(":null") ? s.getValue() : null;
    }

    private static int line(Node n) {
        return n == null || n.getStartMark() == null ? 0 : n.getStartMark().getLine() + 1;
    }
}
