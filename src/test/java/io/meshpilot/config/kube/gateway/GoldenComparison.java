package io.meshpilot.config.kube.gateway;

import com.google.gson.Gson;
import com.google.gson.GsonBuilder;
import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigJson;
import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * Compares converted Istio config and status with istiod's goldens and says what differs, each
 * difference as one readable entry ({@code VirtualService default/x: spec} and a line diff).
 */
final class GoldenComparison {
    private static final Gson PRETTY = new GsonBuilder().setPrettyPrinting().disableHtmlEscaping().create();
    /** istiod's sortConfigByCreationTime (conversion.go): creation time, then namespace, then name. */
    static final Comparator<Config> ISTIOD_ORDER = Comparator
            .comparing((Config c) -> c.creationTimestamp() == null ? Instant.MIN : c.creationTimestamp())
            .thenComparing(Config::namespace).thenComparing(Config::name);

    private GoldenComparison() {
    }

    /**
     * The differences between the golden's configs and the conversion's (already in istiod's order):
     * objects missing or extra, objects whose labels, annotations or spec (proto equality) differ, and
     * the order when that is all that differs.
     */
    static List<String> configs(List<Config> expected, List<Config> actual) {
        List<String> differences = new ArrayList<>();
        List<String> expectedKeys = expected.stream().map(GoldenComparison::describe).toList();
        List<String> actualKeys = actual.stream().map(GoldenComparison::describe).toList();
        for (Config e : expected) {
            Config a = actual.stream().filter(c -> c.key().equals(e.key())).findFirst().orElse(null);
            if (a == null) {
                differences.add("missing " + describe(e) + "\n" + indent(render(e)));
            } else if (!sameContent(e, a)) {
                differences.add(describe(e) + " differs (- golden, + MeshPilot):\n"
                        + indent(LineDiff.between(render(e), render(a))));
            }
        }
        for (Config a : actual) {
            if (expected.stream().noneMatch(e -> e.key().equals(a.key()))) {
                differences.add("extra " + describe(a) + "\n" + indent(render(a)));
            }
        }
        if (differences.isEmpty() && !expectedKeys.equals(actualKeys)) {
            differences.add("order differs (istiod: creation time, namespace, name):\n  golden:    " + expectedKeys
                    + "\n  MeshPilot: " + actualKeys);
        }
        return differences;
    }

    /** The differences between the golden's statuses and the conversion's, each object's status as a whole. */
    static List<String> statuses(Map<ConfigKey, JsonObject> expected, Map<ConfigKey, JsonObject> actual) {
        List<String> differences = new ArrayList<>();
        Set<ConfigKey> keys = new LinkedHashSet<>(expected.keySet());
        keys.addAll(actual.keySet());
        for (ConfigKey key : keys) {
            JsonObject e = expected.get(key);
            JsonObject a = actual.get(key);
            if (a == null) {
                differences.add("missing status of " + key + "\n" + indent(PRETTY.toJson(e)));
            } else if (e == null) {
                differences.add("extra status of " + key + "\n" + indent(PRETTY.toJson(a)));
            } else if (!e.equals(a)) {
                differences.add("status of " + key + " differs (- golden, + MeshPilot):\n"
                        + indent(LineDiff.between(PRETTY.toJson(e), PRETTY.toJson(a))));
            }
        }
        return differences;
    }

    /** A config as the goldens show it: kind, namespace, name, labels, annotations and spec, as JSON. */
    static String render(Config c) {
        JsonObject json = ConfigJson.toJson(c);
        JsonObject meta = json.getAsJsonObject("metadata");
        meta.remove("resourceVersion");
        meta.remove("generation");
        meta.remove("creationTimestamp");
        json.remove("status");
        return PRETTY.toJson(json);
    }

    static String render(JsonObject status) {
        return PRETTY.toJson(status);
    }

    private static boolean sameContent(Config e, Config a) {
        return e.gvk().kind().equals(a.gvk().kind()) && e.labels().equals(a.labels())
                && e.annotations().equals(a.annotations()) && Objects.equals(e.spec(), a.spec());
    }

    private static String describe(Config c) {
        return c.gvk().kind() + " " + c.namespace() + "/" + c.name();
    }

    private static String indent(String text) {
        return text.lines().map(l -> "    " + l).reduce((x, y) -> x + "\n" + y).orElse("");
    }
}
