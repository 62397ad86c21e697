package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.TreeMap;

/**
 * Writes desired {@link Condition}s into an object's existing {@code conditions} the way istiod
 * does (pilot/pkg/model/kstatus UpdateConditionIfChanged, gatewaycommon SetListenerConditions):
 * in sorted type order; a condition of a type not yet present is appended; an existing one with
 * the same status, message and observedGeneration is kept as it is (its reason and
 * lastTransitionTime too); one with the same status but another message or generation is
 * replaced keeping its lastTransitionTime; otherwise it is replaced with the time now.
 * Conditions of other types are kept.
 */
public final class Conditions {
    private Conditions() {
    }

    /**
     * @param existing   the object's current conditions (not changed)
     * @param generation the object's metadata.generation, written as observedGeneration (omitted when 0, as Go does)
     * @param desired    by condition type
     * @param now        the transition time of a changed condition
     */
    public static JsonArray set(JsonArray existing, long generation, Map<String, Condition> desired, Instant now) {
        JsonArray out = existing == null ? new JsonArray() : existing.deepCopy();
        for (Map.Entry<String, Condition> e : new TreeMap<>(desired).entrySet()) {
            Condition c = e.getValue();
            update(out, condition(e.getKey(), c.effectiveStatus(), c.effectiveReason(), c.effectiveMessage(), generation,
                    now));
        }
        return out;
    }

    /** The conditions without the one of {@code type} (istiod's kstatus.RemoveCondition). */
    public static JsonArray remove(JsonArray existing, String type) {
        JsonArray out = new JsonArray();
        boolean removed = false;
        for (JsonElement e : existing) {
            if (!removed && e.isJsonObject() && type.equals(JsonFields.string(e.getAsJsonObject(), "type"))) {
                removed = true;
                continue;
            }
            out.add(e.deepCopy());
        }
        return out;
    }

    /** A condition as Kubernetes writes it; observedGeneration is left out when 0 (omitempty). */
    public static JsonObject condition(String type, String status, String reason, String message, long generation,
                                       Instant now) {
        JsonObject c = new JsonObject();
        c.addProperty("type", type);
        c.addProperty("status", status);
        if (generation != 0) {
            c.addProperty("observedGeneration", generation);
        }
        c.addProperty("lastTransitionTime", now.truncatedTo(ChronoUnit.SECONDS).toString());
        c.addProperty("reason", reason);
        c.addProperty("message", message);
        return c;
    }

    private static void update(JsonArray conditions, JsonObject wanted) {
        String type = JsonFields.string(wanted, "type");
        for (int i = 0; i < conditions.size(); i++) {
            JsonElement e = conditions.get(i);
            if (!e.isJsonObject() || !type.equals(JsonFields.string(e.getAsJsonObject(), "type"))) {
                continue;
            }
            JsonObject have = e.getAsJsonObject();
            if (JsonFields.string(have, "status").equals(JsonFields.string(wanted, "status"))) {
                if (JsonFields.string(have, "message").equals(JsonFields.string(wanted, "message"))
                        && generationOf(have) == generationOf(wanted)) {
                    return;
                }
                if (have.has("lastTransitionTime")) {
                    wanted.add("lastTransitionTime", have.get("lastTransitionTime").deepCopy());
                }
            }
            conditions.set(i, wanted);
            return;
        }
        conditions.add(wanted);
    }

    private static long generationOf(JsonObject c) {
        JsonElement g = c.get("observedGeneration");
        return g != null && g.isJsonPrimitive() && g.getAsJsonPrimitive().isNumber() ? g.getAsLong() : 0;
    }
}
