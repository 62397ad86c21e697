package io.meshpilot.config.schema;

import io.meshpilot.config.Config;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.FieldValidation;
import io.meshpilot.config.GroupVersionKind;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.ValidationResult;
import io.meshpilot.config.yaml.FieldError;
import io.meshpilot.config.yaml.ProtoYamlBinder;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.yaml.YamlBindingException;
import io.meshpilot.config.yaml.YamlDocuments;
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
 * are skipped, not errors. Fields the schema does not know are handled as
 * {@link FieldValidation} says: by default left out with a warning each (istiod reads stored
 * config that way, so config written for another Istio version loads).
 */
public final class ConfigParser {
    /** Kubernetes object names (DNS-1123 subdomain) and namespaces (DNS-1123 label). */
    private static final Pattern NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");
    private static final Pattern NAMESPACE = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Set<String> TOP_LEVEL = Set.of("apiVersion", "kind", "metadata", "spec", "status");
    /** Kubernetes ObjectMeta's fields (clusterName: removed in 1.24, still in old manifests). */
    private static final Set<String> METADATA = Set.of("name", "generateName", "namespace", "selfLink", "uid",
            "resourceVersion", "generation", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds",
            "labels", "annotations", "ownerReferences", "finalizers", "managedFields", "clusterName");
    public static final String DEFAULT_NAMESPACE = "default";

    private final Schemas schemas;
    private final ProtoYamlBinder binder = new ProtoYamlBinder();

    public ConfigParser(Schemas schemas) {
        this.schemas = schemas;
    }

    /** A document skipped because it is not Istio config. */
    public record Skipped(String source, int document, GroupVersionKind gvk, String name) {
    }

    /**
     * What a text held: the configs that loaded, the documents rejected, warnings about
     * accepted documents (kept apart from errors, as istiod does), the documents skipped, and
     * whether the text as a whole could not be read (then nothing loaded). {@code reusable}
     * maps the text of each document that loaded cleanly (one config, no warning) to its
     * config, for {@link #parse(String, String, Map)} of a later version of the same text.
     */
    public record Result(List<Config> configs, List<DocumentError> errors, List<DocumentError> warnings,
                         List<Skipped> skipped, boolean unreadable, Map<String, Config> reusable) {
        public Result(List<Config> configs, List<DocumentError> errors, List<DocumentError> warnings,
                      List<Skipped> skipped, boolean unreadable) {
            this(configs, errors, warnings, skipped, unreadable, Map.of());
        }
    }

    public Result parse(String source, String text) {
        return parse(source, text, Map.of(), FieldValidation.WARN);
    }

    public Result parse(String source, String text, FieldValidation fields) {
        return parse(source, text, Map.of(), fields);
    }

    public Result parse(String source, String text, Map<String, Config> previous) {
        return parse(source, text, previous, FieldValidation.WARN);
    }

    /**
     * Parses {@code text}; a document whose text is a key of {@code previous} (the
     * {@code reusable} of an earlier parse) is taken from there without being parsed again.
     * A rewritten file of 3,000 documents of which a few changed parses only those few.
     * {@code previous} must come from a parse with the same {@code fields}.
     */
    public Result parse(String source, String text, Map<String, Config> previous, FieldValidation fields) {
        List<YamlDocuments.Part> parts = text.length() > SafeYaml.MAX_CHARS ? null : YamlDocuments.split(text);
        boolean cut = parts != null;
        if (!cut) {
            parts = List.of(new YamlDocuments.Part(0, text)); // one stream, parsed whole, nothing reused
        }
        List<Config> configs = new ArrayList<>();
        List<DocumentError> errors = new ArrayList<>();
        List<DocumentError> warnings = new ArrayList<>();
        List<Skipped> skipped = new ArrayList<>();
        Map<String, Config> reusable = new HashMap<>();
        int index = 0;
        for (YamlDocuments.Part part : parts) {
            Config known = previous.get(part.text());
            if (known != null) {
                configs.add(known);
                reusable.put(part.text(), known);
                index++;
                continue;
            }
            List<Node> docs;
            try {
                docs = SafeYaml.documents(source, part.text());
            } catch (YamlBindingException e) {
                FieldError f = e.first();
                return new Result(List.of(), List.of(new DocumentError(source, 0, at(f.line(), part.firstLine()), "", "",
                        "", f.path(), f.reason())), List.of(), List.of(), true);
            }
            for (Node doc : docs) {
                int before = configs.size();
                int errorsBefore = errors.size();
                int warningsBefore = warnings.size();
                int skippedBefore = skipped.size();
                document(source, index++, doc, part.firstLine(), fields, configs, errors, warnings, skipped);
                boolean clean = docs.size() == 1 && configs.size() == before + 1 && errors.size() == errorsBefore
                        && warnings.size() == warningsBefore && skipped.size() == skippedBefore;
                if (clean && cut) {
                    reusable.put(part.text(), configs.get(before));
                }
            }
        }
        return new Result(configs, errors, warnings, skipped, false, reusable);
    }

    /** A line within a document part as a line of the whole text (0: no line known). */
    private static int at(int line, int partFirstLine) {
        return line <= 0 ? 0 : line + partFirstLine;
    }

    private void document(String source, int index, Node doc, int lineOffset, FieldValidation fieldValidation,
                          List<Config> configs, List<DocumentError> errors, List<DocumentError> warnings,
                          List<Skipped> skipped) {
        if (!(doc instanceof MappingNode map)) {
            errors.add(new DocumentError(source, index, at(line(doc), lineOffset), "", "", "", "",
                    "a config document must be an object"));
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
            errors.add(new DocumentError(source, index, at(line(doc), lineOffset), "", "", "",
                    apiVersion == null ? "apiVersion" : "kind",
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
                    .map(s -> notServed(gvk, s))
                    .orElse("unknown kind " + kind + " in " + gvk.group());
            errors.add(new DocumentError(source, index, at(line(fields.get("apiVersion")), lineOffset), kind, ns, who,
                    "apiVersion", reason));
            return;
        }
        List<ValidationResult.Issue> problems = new ArrayList<>();
        List<FieldError> unknownFields = new ArrayList<>();
        for (NodeTuple t : map.getValue()) {
            String key = scalar(t.getKeyNode());
            if (key == null) {
                problems.add(new ValidationResult.Issue("", "keys must be strings"));
            } else if (!TOP_LEVEL.contains(key)) {
                unknownFields.add(new FieldError(key, line(t.getKeyNode()), 0, "unknown field \"" + key
                        + "\" (a Kubernetes object has apiVersion, kind, metadata, spec and status)"));
            }
        }
        if (fields.get("metadata") instanceof MappingNode metaNode) {
            for (NodeTuple t : metaNode.getValue()) {
                String key = scalar(t.getKeyNode());
                if (key != null && !METADATA.contains(key)) {
                    unknownFields.add(new FieldError("metadata." + key, line(t.getKeyNode()), 0,
                            "unknown field \"" + key + "\" in Kubernetes ObjectMeta"));
                }
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
                for (FieldError f : binder.bind(source, specNode, spec, fieldValidation != FieldValidation.STRICT)) {
                    unknownFields.add(new FieldError(f.path().isEmpty() ? "spec" : "spec." + f.path(), f.line(), f.column(),
                            f.reason()));
                }
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
                status = ProtoYamlBinder.toStruct(statusNode);
            } catch (YamlBindingException e) {
                problems.add(new ValidationResult.Issue("status", "must be an object"));
            }
        }
        if (fieldValidation == FieldValidation.STRICT) {
            for (FieldError f : unknownFields) {
                problems.add(new ValidationResult.Issue(f.path(), f.reason()));
            }
        }
        if (problems.isEmpty()) {
            Config config = new Config(gvk, name, schema.clusterScoped() ? "" : ns, labels, annotations, "", 0, null,
                    spec.build(), status);
            Validation v = new Validation();
            schema.validator().validate(config, v);
            ValidationResult r = v.result();
            for (ValidationResult.Issue w : r.warnings()) {
                warnings.add(new DocumentError(source, index, at(YamlPaths.line(doc, w.path()), lineOffset), kind, ns, who,
                        w.path(),
                        w.message()));
            }
            if (r.valid()) {
                if (fieldValidation == FieldValidation.WARN) {
                    for (FieldError f : unknownFields) {
                        warnings.add(new DocumentError(source, index, at(f.line(), lineOffset), kind, ns, who, f.path(),
                                f.reason() + ", ignored"));
                    }
                }
                configs.add(config);
                return;
            }
            problems.addAll(r.errors());
        }
        for (ValidationResult.Issue p : problems) {
            errors.add(new DocumentError(source, index, at(YamlPaths.line(doc, p.path()), lineOffset), kind, ns, who, p.path(),
                    p.message()));
        }
    }

    /** Why a known kind was not read under this apiVersion: the group is wrong, or the version. */
    static String notServed(GroupVersionKind gvk, Schema served) {
        String versions = String.join(", ", served.versions());
        if (!served.group().equals(gvk.group())) {
            return gvk.kind() + " is not in " + gvk.group() + ": it is " + served.group() + " (apiVersion "
                    + served.group() + "/" + served.versions().get(0) + "; versions " + versions + ")";
        }
        return "version " + gvk.version() + " of " + served.group() + " " + gvk.kind() + " is not served (served: "
                + versions + ")";
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
