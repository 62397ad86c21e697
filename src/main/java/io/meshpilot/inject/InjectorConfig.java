package io.meshpilot.inject;

import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The {@code config} key of the {@code istio-sidecar-injector} ConfigMap: the injection
 * policy, the never/always selectors, the annotations added to every injected pod, and the
 * templates. MeshPilot renders istiod's {@code sidecar}, {@code gateway}, {@code grpc-agent} and
 * {@code grpc-simple} templates natively; it keeps the templates as the ConfigMap gives them, to
 * tell a pod asking for another one and to show them at {@code /debug/inject}.
 *
 * @param policy              {@code enabled} (inject unless a pod opts out) or {@code disabled} (only pods that opt in)
 * @param templates           the templates the ConfigMap defines, name to text ({@code templates:}, or {@code sidecar}
 *                            for the older single {@code template:}); the built-in {@code sidecar} has no text
 * @param defaultTemplates    the templates a pod gets without {@code inject.istio.io/templates}
 * @param aliases             template aliases (a name standing for several templates)
 */
public record InjectorConfig(String policy, List<LabelSelector> neverInjectSelector,
                             List<LabelSelector> alwaysInjectSelector, Map<String, String> injectedAnnotations,
                             Map<String, String> templates, List<String> defaultTemplates, Map<String, List<String>> aliases) {
    /** istiod's default template. */
    public static final String SIDECAR_TEMPLATE = "sidecar";

    /**
     * The templates istiod's chart always defines (istio-discovery's files/). MeshPilot's chart
     * leaves their text out (it renders sidecar, gateway and the gRPC ones natively, and not the
     * others), so a pod asking for one it does not render is refused as unrendered rather than
     * with istiod's "not found", which would blame the pod.
     */
    public static final Set<String> ISTIOD_CHART_TEMPLATES = Set.of(SIDECAR_TEMPLATE, "gateway", "grpc-simple",
            "grpc-agent", "waypoint", "kube-gateway", "agentgateway", "agentgateway-waypoint");

    public InjectorConfig {
        neverInjectSelector = List.copyOf(neverInjectSelector);
        alwaysInjectSelector = List.copyOf(alwaysInjectSelector);
        injectedAnnotations = Map.copyOf(injectedAnnotations);
        templates = Collections.unmodifiableMap(new LinkedHashMap<>(templates));
        defaultTemplates = List.copyOf(defaultTemplates);
        aliases = Map.copyOf(aliases);
    }

    /** istiod's chart default: policy enabled, no selectors, the sidecar template. */
    public static InjectorConfig defaults() {
        return new InjectorConfig("enabled", List.of(), List.of(), Map.of(), Map.of(SIDECAR_TEMPLATE, ""),
                List.of(SIDECAR_TEMPLATE), Map.of());
    }

    /** The names of {@link #templates}. */
    public Set<String> templateNames() {
        return templates.keySet();
    }

    /** The templates a pod may name, sorted: those defined and those istiod's chart always defines. */
    public SortedSet<String> knownTemplateNames() {
        SortedSet<String> known = new TreeSet<>(ISTIOD_CHART_TEMPLATES);
        known.addAll(templates.keySet());
        return known;
    }

    /**
     * Parses the {@code config} text (YAML).
     *
     * @throws IllegalArgumentException naming the field that is wrong and why
     */
    public static InjectorConfig parse(String yaml) {
        if (yaml == null || yaml.isBlank()) {
            return defaults();
        }
        Object root;
        try {
            root = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("config: not YAML: " + e.getMessage(), e);
        }
        if (!(root instanceof Map<?, ?> m)) {
            throw new IllegalArgumentException("config: expected a mapping at the top level");
        }
        String policy = m.get("policy") == null ? "enabled" : String.valueOf(m.get("policy"));
        Map<String, String> names = new LinkedHashMap<>();
        if (m.get("template") instanceof String s && !s.isBlank()) {
            names.put(SIDECAR_TEMPLATE, s);
        }
        if (m.get("templates") instanceof Map<?, ?> t) {
            t.forEach((k, v) -> names.put(String.valueOf(k), v == null ? "" : String.valueOf(v)));
        } else if (m.get("templates") != null) {
            throw new IllegalArgumentException("config.templates: expected a mapping of name to template");
        }
        List<String> defaults = strings(m.get("defaultTemplates"), "config.defaultTemplates");
        Map<String, List<String>> aliases = new LinkedHashMap<>();
        if (m.get("aliases") instanceof Map<?, ?> a) {
            a.forEach((k, v) -> aliases.put(String.valueOf(k), strings(v, "config.aliases." + k)));
        }
        Map<String, String> injected = new LinkedHashMap<>();
        if (m.get("injectedAnnotations") instanceof Map<?, ?> a) {
            a.forEach((k, v) -> injected.put(String.valueOf(k), v == null ? "" : String.valueOf(v)));
        }
        return new InjectorConfig(policy, selectors(m.get("neverInjectSelector"), "config.neverInjectSelector"),
                selectors(m.get("alwaysInjectSelector"), "config.alwaysInjectSelector"), injected,
                names.isEmpty() ? Map.of(SIDECAR_TEMPLATE, "") : names,
                defaults.isEmpty() ? List.of(SIDECAR_TEMPLATE) : defaults, aliases);
    }

    private static List<String> strings(Object o, String where) {
        if (o == null) {
            return List.of();
        }
        if (!(o instanceof List<?> l)) {
            throw new IllegalArgumentException(where + ": expected a list of names");
        }
        return l.stream().map(String::valueOf).toList();
    }

    private static List<LabelSelector> selectors(Object o, String where) {
        if (o == null) {
            return List.of();
        }
        if (!(o instanceof List<?> l)) {
            throw new IllegalArgumentException(where + ": expected a list of label selectors");
        }
        List<LabelSelector> out = new ArrayList<>();
        for (int i = 0; i < l.size(); i++) {
            String at = where + "[" + i + "]";
            if (!(l.get(i) instanceof Map<?, ?> s)) {
                throw new IllegalArgumentException(at + ": expected a label selector");
            }
            Map<String, String> labels = new LinkedHashMap<>();
            if (s.get("matchLabels") instanceof Map<?, ?> ml) {
                ml.forEach((k, v) -> labels.put(String.valueOf(k), String.valueOf(v)));
            }
            List<LabelSelector.Requirement> reqs = new ArrayList<>();
            if (s.get("matchExpressions") instanceof List<?> me) {
                for (Object r : me) {
                    if (!(r instanceof Map<?, ?> req) || req.get("key") == null || req.get("operator") == null) {
                        throw new IllegalArgumentException(at + ".matchExpressions: each needs key and operator");
                    }
                    String key = String.valueOf(req.get("key"));
                    String operator = String.valueOf(req.get("operator"));
                    if (!LabelSelector.OPERATORS.contains(operator)) {
                        throw new IllegalArgumentException(at + ": matchExpressions key " + key + ": operator " + operator
                                + " is not In, NotIn, Exists or DoesNotExist");
                    }
                    reqs.add(new LabelSelector.Requirement(key, operator,
                            new LinkedHashSet<>(strings(req.get("values"), at + ".values"))));
                }
            }
            out.add(new LabelSelector(labels, reqs));
        }
        return out;
    }

    /** The templates a pod gets: its {@code inject.istio.io/templates} annotation or the defaults, aliases resolved. */
    public List<String> templatesFor(Map<String, String> podAnnotations) {
        String asked = podAnnotations.get("inject.istio.io/templates");
        List<String> names = asked != null
                ? Arrays.stream(asked.split(",")).map(String::trim).toList()
                : defaultTemplates;
        List<String> out = new ArrayList<>();
        for (String n : names) {
            out.addAll(aliases.getOrDefault(n, List.of(n)));
        }
        return out;
    }
}
