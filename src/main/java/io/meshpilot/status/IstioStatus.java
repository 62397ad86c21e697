package io.meshpilot.status;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.time.Instant;
import java.util.List;

/**
 * The status istiod's status controller would leave on an Istio object (istio.io/api
 * meta.v1alpha1.IstioStatus), worked out from the status the object has now: only what this
 * controller owns changes. The {@code Reconciled} condition is replaced only when its status,
 * reason or message changes (its times then move, as in istiod's ReconcileStatuses);
 * conditions of other types and fields of other writers are kept as they are.
 * {@code observedGeneration} is written as istiod writes the proto's int64: a decimal string.
 */
public final class IstioStatus {
    public static final String RECONCILED = "Reconciled";
    /** The reason on a Reconciled=False condition when some proxy rejected the config. */
    public static final String REJECTED = "ProxyRejected";

    private IstioStatus() {
    }

    /**
     * @param current    the object's status now (empty object when it has none)
     * @param generation the object's metadata.generation the status is about
     * @param progress   the distribution to report, or null to leave the Reconciled condition as it is
     * @param messages   the validation messages to report, or null to leave validationMessages as they are
     * @param now        the time a changed condition is stamped with
     */
    public static JsonObject desired(JsonObject current, long generation, Progress progress,
                                     List<ValidationMessage> messages, Instant now) {
        JsonObject out = current.deepCopy();
        out.addProperty("observedGeneration", Long.toString(generation));
        if (progress != null) {
            out.add("conditions", withReconciled(current, progress, now));
        }
        if (messages != null) {
            if (messages.isEmpty()) {
                out.remove("validationMessages");
            } else {
                JsonArray list = new JsonArray();
                messages.forEach(m -> list.add(m.toJson()));
                out.add("validationMessages", list);
            }
        }
        return out;
    }

    private static JsonArray withReconciled(JsonObject current, Progress progress, Instant now) {
        String status = progress.reconciled() ? "True" : "False";
        String reason = progress.nacked() > 0 ? REJECTED : "";
        String message = progress.message();
        JsonArray conditions = new JsonArray();
        boolean placed = false;
        JsonElement existing = current.get("conditions");
        if (existing != null && existing.isJsonArray()) {
            for (JsonElement e : existing.getAsJsonArray()) {
                if (!placed && e.isJsonObject() && RECONCILED.equals(string(e.getAsJsonObject(), "type"))) {
                    JsonObject old = e.getAsJsonObject();
                    boolean same = status.equals(string(old, "status")) && reason.equals(string(old, "reason"))
                            && message.equals(string(old, "message"));
                    conditions.add(same ? old.deepCopy() : condition(status, reason, message, now));
                    placed = true;
                } else {
                    conditions.add(e.deepCopy());
                }
            }
        }
        if (!placed) {
            conditions.add(condition(status, reason, message, now));
        }
        return conditions;
    }

    private static JsonObject condition(String status, String reason, String message, Instant now) {
        JsonObject c = new JsonObject();
        c.addProperty("type", RECONCILED);
        c.addProperty("status", status);
        c.addProperty("lastProbeTime", now.toString());
        c.addProperty("lastTransitionTime", now.toString());
        if (!reason.isEmpty()) {
            c.addProperty("reason", reason);
        }
        c.addProperty("message", message);
        return c;
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
