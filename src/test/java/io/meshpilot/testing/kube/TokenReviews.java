package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;

/**
 * {@code authentication.k8s.io/v1} TokenReview: create-only, nothing stored, the answer is
 * what the test said about the token. Answers have the real server's shape:
 * {@code status.authenticated}, {@code status.user} (username, uid, groups, and for
 * pod-bound tokens the {@code authentication.kubernetes.io/pod-name}/{@code pod-uid}
 * extras), {@code status.audiences} (the requested audiences the token has; the API
 * server's own when none are requested) and {@code status.error} for a token it refuses.
 * {@link #failWith} and {@link #delay} play an API server that is down or slow for reviews.
 */
public final class TokenReviews {
    /** The API server's own audience, what a review without audiences checks. */
    public static final String API_SERVER_AUDIENCE = "https://kubernetes.default.svc.cluster.local";

    private record Known(String username, List<String> audiences, String podName, String podUid, String uid) {
    }

    private final Map<String, Known> tokens = new ConcurrentHashMap<>();
    private volatile int failureCode;
    private volatile Duration delay = Duration.ZERO;

    /** {@code token} belongs to {@code username} and is valid for {@code audiences}. */
    public TokenReviews accept(String token, String username, List<String> audiences) {
        return acceptForPod(token, username, audiences, null, null);
    }

    /** A pod-bound token: the review also names the pod. */
    public TokenReviews acceptForPod(String token, String username, List<String> audiences, String podName,
                                     String podUid) {
        tokens.put(token, new Known(username, List.copyOf(audiences), podName, podUid, UUID.randomUUID().toString()));
        return this;
    }

    /** Forgets {@code token}: reviews of it fail as for an unknown or expired token. */
    public TokenReviews revoke(String token) {
        tokens.remove(token);
        return this;
    }

    /** Answers every review with this HTTP status (a Status object), 0 to answer again. */
    public TokenReviews failWith(int code) {
        this.failureCode = code;
        return this;
    }

    /** Waits this long before answering a review. */
    public TokenReviews delay(Duration delay) {
        this.delay = delay;
        return this;
    }

    /** The answer to a posted review; an {@link ApiError} when told to fail. */
    JsonObject review(JsonObject request) {
        if (!delay.isZero()) {
            try {
                Thread.sleep(delay);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        if (failureCode != 0) {
            throw new ApiError(failureCode, "ServiceUnavailable", "the TokenReview stand-in was told to fail", null, null);
        }
        JsonObject spec = request.has("spec") && request.get("spec").isJsonObject()
                ? request.getAsJsonObject("spec") : new JsonObject();
        String token = spec.has("token") ? spec.get("token").getAsString() : "";
        List<String> requested = new ArrayList<>();
        if (spec.has("audiences") && spec.get("audiences").isJsonArray()) {
            spec.getAsJsonArray("audiences").forEach(a -> requested.add(a.getAsString()));
        }
        if (requested.isEmpty()) {
            requested.add(API_SERVER_AUDIENCE);
        }
        JsonObject status = new JsonObject();
        status.add("user", new JsonObject());
        Known known = tokens.get(token);
        if (known == null) {
            status.addProperty("error", "[invalid bearer token, token lookup failed]");
        } else {
            List<String> shared = requested.stream().filter(known.audiences::contains).toList();
            if (shared.isEmpty()) {
                status.addProperty("error", "[invalid bearer token, token audiences " + known.audiences
                        + " is invalid for the target audiences " + requested + "]");
            } else {
                status.addProperty("authenticated", true);
                status.add("user", user(known));
                status.add("audiences", strings(shared));
            }
        }
        JsonObject out = new JsonObject();
        out.addProperty("kind", "TokenReview");
        out.addProperty("apiVersion", "authentication.k8s.io/v1");
        JsonObject meta = new JsonObject();
        meta.add("creationTimestamp", JsonNull.INSTANCE);
        out.add("metadata", meta);
        out.add("spec", spec.deepCopy());
        out.add("status", status);
        return out;
    }

    private static JsonObject user(Known known) {
        JsonObject user = new JsonObject();
        user.addProperty("username", known.username);
        user.addProperty("uid", known.uid);
        List<String> groups = new ArrayList<>();
        String[] parts = known.username.split(":");
        if (known.username.startsWith("system:serviceaccount:") && parts.length == 4) {
            groups.add("system:serviceaccounts");
            groups.add("system:serviceaccounts:" + parts[2]);
        }
        groups.add("system:authenticated");
        user.add("groups", strings(groups));
        if (known.podName != null) {
            JsonObject extra = new JsonObject();
            extra.add("authentication.kubernetes.io/pod-name", strings(List.of(known.podName)));
            extra.add("authentication.kubernetes.io/pod-uid", strings(List.of(known.podUid)));
            user.add("extra", extra);
        }
        return user;
    }

    private static JsonArray strings(List<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }

    static boolean isReviewPath(String[] segments) {
        return segments.length == 4 && segments[0].equals("apis") && segments[1].equals("authentication.k8s.io")
                && segments[2].equals("v1") && segments[3].equals("tokenreviews");
    }
}
