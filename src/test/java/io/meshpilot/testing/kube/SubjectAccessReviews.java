package io.meshpilot.testing.kube;

import com.google.gson.JsonObject;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@code authorization.k8s.io/v1} SubjectAccessReview: create-only, nothing stored, the answer
 * is what the test granted. A user is allowed a verb on a resource in a namespace only when
 * {@link #allow} said so, as RBAC allows nothing by default; the answer has the real server's
 * shape ({@code status.allowed}, {@code status.reason}, {@code status.denied} never set, as RBAC
 * has no deny rules). {@link #failWith} plays an API server that cannot answer reviews.
 * {@link #asked} lists every review's user, verb, resource and namespace, in order.
 */
public final class SubjectAccessReviews {
    /** One review's question. */
    public record Question(String user, String verb, String resource, String namespace) {
    }

    /** user -> "verb resource namespace" -> the reason RBAC gives when allowing. */
    private final Map<String, Map<String, String>> grants = new ConcurrentHashMap<>();
    private final List<Question> asked = new CopyOnWriteArrayList<>();
    private volatile int failureCode;

    /** {@code user} may {@code verb} {@code resource} in {@code namespace} (a Role and RoleBinding). */
    public SubjectAccessReviews allow(String user, String verb, String resource, String namespace) {
        grants.computeIfAbsent(user, u -> new ConcurrentHashMap<>()).put(key(verb, resource, namespace),
                "RBAC: allowed by RoleBinding \"" + user.substring(user.lastIndexOf(':') + 1) + "\" of Role in namespace \""
                        + namespace + "\"");
        return this;
    }

    /** Takes every grant of {@code user} away. */
    public SubjectAccessReviews revoke(String user) {
        grants.remove(user);
        return this;
    }

    /** Answers every review with this HTTP status (a Status object), 0 to answer again. */
    public SubjectAccessReviews failWith(int code) {
        this.failureCode = code;
        return this;
    }

    /** The questions asked so far. */
    public List<Question> asked() {
        return List.copyOf(asked);
    }

    JsonObject review(JsonObject request) {
        if (failureCode != 0) {
            throw new ApiError(failureCode, "ServiceUnavailable", "the SubjectAccessReview stand-in was told to fail",
                    null, null);
        }
        JsonObject spec = request.has("spec") && request.get("spec").isJsonObject()
                ? request.getAsJsonObject("spec") : new JsonObject();
        boolean noGroups = !spec.has("groups") || !spec.get("groups").isJsonArray() || spec.getAsJsonArray("groups").isEmpty();
        if (text(spec, "user").isEmpty() && noGroups) {
            throw new ApiError(422, "Invalid", "SubjectAccessReview.authorization.k8s.io \"\" is invalid: "
                    + "spec.user: Invalid value: \"\": at least one of user or group must be specified", null, null);
        }
        JsonObject attributes = spec.has("resourceAttributes") && spec.get("resourceAttributes").isJsonObject()
                ? spec.getAsJsonObject("resourceAttributes") : new JsonObject();
        Question q = new Question(text(spec, "user"), text(attributes, "verb"), text(attributes, "resource"),
                text(attributes, "namespace"));
        asked.add(q);
        String reason = grants.getOrDefault(q.user(), Map.of()).get(key(q.verb(), q.resource(), q.namespace()));
        JsonObject status = new JsonObject();
        status.addProperty("allowed", reason != null);
        if (reason != null) {
            status.addProperty("reason", reason);
        }
        JsonObject out = new JsonObject();
        out.addProperty("kind", "SubjectAccessReview");
        out.addProperty("apiVersion", "authorization.k8s.io/v1");
        out.add("metadata", new JsonObject());
        out.add("spec", spec.deepCopy());
        out.add("status", status);
        return out;
    }

    private static String key(String verb, String resource, String namespace) {
        return verb + " " + resource + " " + namespace;
    }

    private static String text(JsonObject o, String field) {
        return o.has(field) && o.get(field).isJsonPrimitive() ? o.get(field).getAsString() : "";
    }

    static boolean isReviewPath(String[] segments) {
        return segments.length == 4 && segments[0].equals("apis") && segments[1].equals("authorization.k8s.io")
                && segments[2].equals("v1") && segments[3].equals("subjectaccessreviews");
    }
}
