package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;

/**
 * How the real API server splits a CertificateSigningRequest's status between its two
 * subresources: {@code /approval} changes only the conditions (an approver adds Approved or
 * Denied), {@code /status} changes the rest (a signer sets {@code certificate} or a Failed
 * condition) but keeps the Approved/Denied conditions the approver wrote. Each function returns
 * the object to store, keeping the body's resourceVersion for the conflict check.
 */
final class CsrSubresources {
    private CsrSubresources() {
    }

    /** PUT .../approval: the body's conditions, everything else as stored. */
    static JsonObject approved(JsonObject current, JsonObject body) {
        JsonObject next = withVersionOf(current, body);
        JsonObject status = statusOf(next);
        JsonElement conditions = body.has("status") ? body.getAsJsonObject("status").get("conditions") : null;
        status.remove("conditions");
        if (conditions != null && conditions.isJsonArray()) {
            status.add("conditions", conditions.deepCopy());
        }
        return next;
    }

    /** PUT .../status: the body's status, except that approval conditions stay as stored. */
    static JsonObject signed(JsonObject current, JsonObject body) {
        JsonObject next = withVersionOf(current, body);
        JsonObject status = body.has("status") ? body.getAsJsonObject("status").deepCopy() : new JsonObject();
        JsonArray conditions = new JsonArray();
        for (JsonElement c : array(statusOf(current.deepCopy()).get("conditions"))) {
            if (isApproval(c)) {
                conditions.add(c.deepCopy());
            }
        }
        for (JsonElement c : array(status.get("conditions"))) {
            if (!isApproval(c)) {
                conditions.add(c.deepCopy());
            }
        }
        status.remove("conditions");
        if (!conditions.isEmpty()) {
            status.add("conditions", conditions);
        }
        next.add("status", status);
        return next;
    }

    private static boolean isApproval(JsonElement condition) {
        String type = condition.isJsonObject() ? Json.string(condition.getAsJsonObject(), "type") : null;
        return "Approved".equals(type) || "Denied".equals(type);
    }

    private static JsonArray array(JsonElement e) {
        return e != null && e.isJsonArray() ? e.getAsJsonArray() : new JsonArray();
    }

    private static JsonObject statusOf(JsonObject o) {
        if (!o.has("status") || !o.get("status").isJsonObject()) {
            o.add("status", new JsonObject());
        }
        return o.getAsJsonObject("status");
    }

    private static JsonObject withVersionOf(JsonObject current, JsonObject body) {
        JsonObject next = current.deepCopy();
        String version = Json.string(body, "metadata", "resourceVersion");
        if (version != null && !version.isEmpty()) {
            Json.metadata(next).addProperty("resourceVersion", version);
        } else {
            Json.metadata(next).remove("resourceVersion");
        }
        return next;
    }
}
