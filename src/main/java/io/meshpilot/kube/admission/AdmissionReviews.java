package io.meshpilot.kube.admission;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.meshpilot.util.PrintableText;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Set;

/**
 * The AdmissionReview envelope of Kubernetes' admission.k8s.io, versions v1 and v1beta1 (the
 * API server sends the first version the webhook configuration's admissionReviewVersions
 * names; istiod's chart lists both). The answer carries the request's apiVersion and uid.
 * The one codec of every admission webhook (validation and sidecar injection), so both read
 * and refuse a review alike; it lives with the Kubernetes client as it is Kubernetes' API and
 * knows no webhook.
 */
public final class AdmissionReviews {
    public static final String GROUP = "admission.k8s.io";
    static final Set<String> VERSIONS = Set.of(GROUP + "/v1", GROUP + "/v1beta1");

    private AdmissionReviews() {
    }

    /** A review that could not be read, with why (istiod answers it as a refusal). */
    public static final class UnreadableReview extends Exception {
        UnreadableReview(String message) {
            super(message);
        }
    }

    /** The decoded review: its apiVersion (for the answer) and request. */
    public record Review(String apiVersion, AdmissionRequest request) {
    }

    public static Review decode(String body) throws UnreadableReview {
        JsonElement parsed;
        try {
            parsed = JsonParser.parseString(body);
        } catch (JsonParseException e) {
            throw new UnreadableReview("not JSON: " + rootMessage(e));
        }
        if (!parsed.isJsonObject()) {
            throw new UnreadableReview("an AdmissionReview must be a JSON object");
        }
        JsonObject review = parsed.getAsJsonObject();
        String apiVersion = string(review, "apiVersion");
        String kind = string(review, "kind");
        // istiod's decoder checks the kind, then the version (its message also quotes the whole
        // body, which here could be megabytes, so it is left out)
        if (kind == null || kind.isEmpty()) {
            throw new UnreadableReview("Object 'Kind' is missing");
        }
        if (apiVersion == null || apiVersion.isEmpty()) {
            throw new UnreadableReview("Object 'apiVersion' is missing");
        }
        if (!"AdmissionReview".equals(kind) || !VERSIONS.contains(apiVersion)) {
            throw new UnreadableReview("expected kind AdmissionReview of admission.k8s.io/v1 or v1beta1, got kind \""
                    + PrintableText.clip(kind, 200) + "\" apiVersion \"" + PrintableText.clip(apiVersion, 200) + "\"");
        }
        JsonObject request = object(review, "request");
        if (request == null) {
            throw new UnreadableReview("the AdmissionReview has no request");
        }
        JsonObject kindOf = object(request, "kind");
        JsonObject resource = object(request, "resource");
        JsonElement dryRun = request.get("dryRun");
        return new Review(apiVersion, new AdmissionRequest(string(request, "uid"),
                new AdmissionRequest.Gvk(string(kindOf, "group"), string(kindOf, "version"), string(kindOf, "kind")),
                new AdmissionRequest.Gvr(string(resource, "group"), string(resource, "version"),
                        string(resource, "resource")),
                string(request, "name"), string(request, "namespace"), string(request, "operation"),
                object(request, "object"), object(request, "oldObject"),
                dryRun != null && dryRun.isJsonPrimitive() && dryRun.getAsJsonPrimitive().isBoolean()
                        && dryRun.getAsBoolean()));
    }

    /**
     * The answering AdmissionReview. {@code review} is null when the request could not be
     * read: the answer is then a v1 review with no uid (istiod's has the v1 shape too, but
     * leaves out apiVersion and kind; a caller that sent no review reads neither).
     */
    public static JsonObject encode(Review review, AdmissionResponse response) {
        JsonObject out = new JsonObject();
        out.addProperty("apiVersion", review == null ? GROUP + "/v1" : review.apiVersion());
        out.addProperty("kind", "AdmissionReview");
        JsonObject r = new JsonObject();
        if (review != null && review.request().uid() != null) {
            r.addProperty("uid", review.request().uid());
        }
        r.addProperty("allowed", response.allowed());
        if (response.message() != null) {
            JsonObject status = new JsonObject();
            status.addProperty("message", response.message());
            r.add("status", status);
        }
        if (response.patch() != null) {
            r.addProperty("patch", Base64.getEncoder().encodeToString(response.patch().getBytes(StandardCharsets.UTF_8)));
            r.addProperty("patchType", "JSONPatch");
        }
        if (!response.warnings().isEmpty()) {
            JsonArray w = new JsonArray();
            response.warnings().forEach(w::add);
            r.add("warnings", w);
        }
        out.add("response", r);
        return out;
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.getMessage();
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o == null ? null : o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : null;
    }

    private static JsonObject object(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : null;
    }
}
