package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A route's {@code status.parents} as istiod writes it (createRouteStatus in
 * pilot/pkg/config/kube/gateway/conditions.go): one entry per parentRef with Accepted (the best
 * of its listeners; errors of equal rank joined) and ResolvedRefs (the route's conversion
 * error). Entries of other controllers are kept in place, ours are updated in place, new ones
 * appended in descending parentRef order, ours for parentRefs that are gone removed. A
 * condition that did not change keeps its lastTransitionTime.
 */
final class RouteStatusReport {
    static final String ACCEPTED = "Accepted";
    static final String RESOLVED_REFS = "ResolvedRefs";
    private static final Set<String> PARENT_REF_FIELDS = Set.of("group", "kind", "namespace", "name", "sectionName", "port");

    /** One listener's verdict for the status: the parent reference and the error of the route form it gets. */
    record ParentResult(RouteParentRef parent, ConfigError routeError) {
    }

    private final String controllerName;
    private final Instant now;

    RouteStatusReport(String controllerName, Instant now) {
        this.controllerName = controllerName;
        this.now = now;
    }

    /** The route's desired status: its current status with {@code parents} recomputed. */
    JsonObject status(GatewayApiObject route, List<ParentResult> results) {
        JsonObject status = route.status();
        JsonArray current = status.has("parents") && status.get("parents").isJsonArray()
                ? status.getAsJsonArray("parents") : new JsonArray();
        List<JsonObject> parents = new ArrayList<>();
        current.forEach(e -> parents.add(e.isJsonObject() ? e.getAsJsonObject() : new JsonObject()));
        Map<String, Integer> ourIndexes = new HashMap<>();
        for (int i = 0; i < parents.size(); i++) {
            if (ours(parents.get(i))) {
                ourIndexes.putIfAbsent(refString(parents.get(i), route), i);
            }
        }

        Map<JsonObject, List<ParentResult>> byReference = new IdentityHashMap<>();
        List<JsonObject> references = new ArrayList<>();
        for (ParentResult r : results) {
            byReference.computeIfAbsent(r.parent().original(), k -> {
                references.add(k);
                return new ArrayList<>();
            }).add(r);
        }
        List<JsonObject> toAppend = new ArrayList<>();
        for (JsonObject reference : references) {
            List<ParentResult> forReference = byReference.get(reference);
            long accepted = forReference.stream().filter(r -> r.parent().accepted()).count();
            Verdict verdict = collapse(forReference);
            Map<String, Condition> conditions = Map.of(
                    ACCEPTED, Condition.ok(ACCEPTED, accepted > 1 ? "Route was valid, bound to " + accepted + " parents"
                            : "Route was valid").withError(verdict.denied() == null ? null
                            : new ConfigError(verdict.denied().reason(), verdict.denied().message())),
                    RESOLVED_REFS, Condition.ok(RESOLVED_REFS, "All references resolved").withError(verdict.routeError()));
            String refString = RouteParentsResolver.parentRefString(reference, route.namespace());
            JsonArray existing = parents.stream().filter(p -> ours(p) && refString(p, route).equals(refString))
                    .findFirst().map(p -> p.has("conditions") && p.get("conditions").isJsonArray()
                            ? p.getAsJsonArray("conditions") : new JsonArray())
                    .orElseGet(JsonArray::new);
            JsonObject entry = new JsonObject();
            entry.add("parentRef", parentRef(reference));
            entry.addProperty("controllerName", controllerName);
            entry.add("conditions", Conditions.set(existing, route.generation(), conditions, now));
            Integer index = ourIndexes.remove(refString);
            if (index != null) {
                parents.set(index, entry);
            } else {
                toAppend.add(entry);
            }
        }
        toAppend.sort(Comparator.comparing((JsonObject p) -> refString(p, route)).reversed());
        List<JsonObject> kept = new ArrayList<>();
        for (int i = 0; i < parents.size(); i++) {
            if (!ourIndexes.containsValue(i)) {
                kept.add(parents.get(i));
            }
        }
        kept.addAll(toAppend);
        JsonArray out = new JsonArray();
        kept.forEach(out::add);
        status.add("parents", out);
        return status;
    }

    private boolean ours(JsonObject parentStatus) {
        return controllerName.equals(JsonFields.string(parentStatus, "controllerName"));
    }

    private static String refString(JsonObject parentStatus, GatewayApiObject route) {
        return RouteParentsResolver.parentRefString(
                JsonFields.optionalObject(parentStatus, "parentRef").orElseGet(JsonObject::new), route.namespace());
    }

    /** The parentRef as the API serializes it: only its own fields. */
    private static JsonObject parentRef(JsonObject reference) {
        JsonObject out = new JsonObject();
        reference.entrySet().stream().filter(e -> PARENT_REF_FIELDS.contains(e.getKey()))
                .forEach(e -> out.add(e.getKey(), e.getValue().deepCopy()));
        return out;
    }

    private record Verdict(ParentError denied, ConfigError routeError) {
    }

    /**
     * One verdict for a parentRef that matched several listeners: any accepted listener makes
     * it accepted; else the lowest-ranked reason, with the messages of equal rank joined.
     */
    private static Verdict collapse(List<ParentResult> results) {
        ParentResult first = results.get(0);
        ParentError denied = first.parent().denied();
        ConfigError routeError = first.routeError();
        int rank = rank(denied);
        for (ParentResult r : results.subList(1, results.size())) {
            int other = rank(r.parent().denied());
            if (other < rank) {
                rank = other;
                denied = r.parent().denied();
                routeError = r.routeError();
            } else if (other == rank && denied != null) {
                denied = new ParentError(denied.reason(), denied.message() + "; " + r.parent().denied().message());
            }
        }
        return new Verdict(denied, routeError);
    }

    private static int rank(ParentError denied) {
        return denied == null ? 0 : denied.rank();
    }
}
