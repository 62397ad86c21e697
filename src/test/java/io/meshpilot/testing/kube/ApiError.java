package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import java.util.Locale;

/**
 * A failed API call, answered as Kubernetes' {@code Status} object with the HTTP code, the
 * machine-readable reason clients branch on (NotFound, AlreadyExists, Conflict, Expired...) and
 * the message kubectl prints.
 */
final class ApiError extends RuntimeException {
    private final int code;
    private final String reason;
    private final String name;
    private final ResourceType type;
    /** details.causes[0].reason, for the errors the real server gives a cause (null: none). */
    private final String cause;

    ApiError(int code, String reason, String message, ResourceType type, String name) {
        this(code, reason, message, type, name, null);
    }

    private ApiError(int code, String reason, String message, ResourceType type, String name, String cause) {
        super(message);
        this.code = code;
        this.reason = reason;
        this.type = type;
        this.name = name;
        this.cause = cause;
    }

    int code() {
        return code;
    }

    static ApiError notFound(ResourceType t, String name) {
        return new ApiError(404, "NotFound", qualified(t) + " \"" + name + "\" not found", t, name);
    }

    static ApiError alreadyExists(ResourceType t, String name) {
        return new ApiError(409, "AlreadyExists", qualified(t) + " \"" + name + "\" already exists", t, name);
    }

    static ApiError conflict(ResourceType t, String name, String why) {
        return new ApiError(409, "Conflict", "Operation cannot be fulfilled on " + qualified(t) + " \"" + name
                + "\": " + why, t, name);
    }

    static ApiError invalid(ResourceType t, String name, String why) {
        return new ApiError(422, "Invalid", t.kind() + " \"" + name + "\" is invalid: " + why, t, name);
    }

    /** RBAC's refusal, worded as the real server's. */
    static ApiError forbidden(String resource, String method, String namespace) {
        String verb = switch (method) {
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> "delete";
            default -> method.toLowerCase(Locale.ROOT);
        };
        return new ApiError(403, "Forbidden", resource + " is forbidden: User \"system:serviceaccount:istio-system:istiod\" "
                + "cannot " + verb + " resource \"" + resource + "\" in API group \"\" in the namespace \"" + namespace + "\"",
                null, null);
    }

    static ApiError badRequest(String why) {
        return new ApiError(400, "BadRequest", why, null, null);
    }

    static ApiError expired(long requested, long oldest) {
        return new ApiError(410, "Expired", "too old resource version: " + requested + " (" + oldest + ")", null, null);
    }

    /** The real server's answer to a read from a resourceVersion its watch cache has not reached. */
    static ApiError tooLargeResourceVersion(long requested, long current) {
        return new ApiError(504, "Timeout", "Timeout: Too large resource version: " + requested + ", current: " + current,
                null, null, "ResourceVersionTooLarge");
    }

    static ApiError notFoundPath(String path) {
        return new ApiError(404, "NotFound", "the server could not find the requested resource (" + path + ")", null,
                null);
    }

    static ApiError methodNotAllowed(String method) {
        return new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource ("
                + method + ")", null, null);
    }

    static ApiError unsupportedMediaType(String contentType) {
        return new ApiError(415, "UnsupportedMediaType", "the body of the request was in an unknown format - accepted "
                + "media types include: application/json-patch+json, application/merge-patch+json, "
                + "application/apply-patch+yaml (got " + contentType + ")", null, null);
    }

    /** "services", "virtualservices.networking.istio.io": how the real server names a resource in messages. */
    private static String qualified(ResourceType t) {
        return t.group().isEmpty() ? t.plural() : t.plural() + "." + t.group();
    }

    JsonObject status() {
        JsonObject s = new JsonObject();
        s.addProperty("kind", "Status");
        s.addProperty("apiVersion", "v1");
        s.add("metadata", new JsonObject());
        s.addProperty("status", "Failure");
        s.addProperty("message", getMessage());
        s.addProperty("reason", reason);
        if (type != null || name != null || cause != null) {
            JsonObject details = new JsonObject();
            if (name != null) {
                details.addProperty("name", name);
            }
            if (type != null) {
                details.addProperty("group", type.group());
                details.addProperty("kind", type.plural());
            }
            if (cause != null) {
                JsonObject c = new JsonObject();
                c.addProperty("reason", cause);
                c.addProperty("message", "Too large resource version");
                JsonArray causes = new JsonArray();
                causes.add(c);
                details.add("causes", causes);
                details.addProperty("retryAfterSeconds", 1);
            }
            s.add("details", details);
        }
        s.addProperty("code", code);
        return s;
    }
}
