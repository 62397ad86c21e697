package io.meshpilot.testing.kube;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpHandler;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Base64;
import java.util.Deque;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * The REST protocol of the API server over one HTTP exchange: discovery, OpenAPI, and per
 * resource get, list, watch, create, update, patch, delete and delete-collection, with the
 * status subresource. Answers are JSON; failures are Status objects with the real server's
 * codes and reasons.
 */
final class ApiHandler implements HttpHandler {
    private static final int REQUEST_LOG_LIMIT = 10_000;

    private final ResourceCatalog catalog;
    private final ObjectStore store;
    private final OpenApiDocuments openApi;
    private final WatchStreams watches;
    private final Deque<String> requestLog = new ArrayDeque<>();
    private final TokenReviews tokenReviews = new TokenReviews();
    private final SubjectAccessReviews accessReviews = new SubjectAccessReviews();

    /** "resource namespace" pairs whose writes are refused as RBAC refuses them. */
    private final Set<String> forbiddenWrites = ConcurrentHashMap.newKeySet();
    /** Per {@code plural/namespace/name/fieldManager}, the configuration that manager last applied. */
    private final Map<String, JsonObject> lastApplied = new ConcurrentHashMap<>();
    private volatile FakeApiServer.Admission admission;
    private volatile Runnable beforeWriteAnswer;

    TokenReviews tokenReviews() {
        return tokenReviews;
    }

    SubjectAccessReviews accessReviews() {
        return accessReviews;
    }

    void forbidWrites(String resource, String namespace) {
        forbiddenWrites.add(resource + " " + namespace);
    }

    void admission(FakeApiServer.Admission admission) {
        this.admission = admission;
    }

    void beforeWriteAnswer(Runnable hook) {
        this.beforeWriteAnswer = hook;
    }

    /** The answer to a create, update, patch or delete that was stored: the hook runs first. */
    private int sendWritten(HttpExchange exchange, int code, JsonObject stored) throws IOException {
        Runnable hook = beforeWriteAnswer;
        if (hook != null) {
            hook.run();
        }
        return send(exchange, code, stored);
    }

    /** The admission step of a create or update: refused objects are answered 400 with the refusal. */
    private JsonObject admitted(String operation, ResourceType type, String namespace, JsonObject body, boolean dryRun) {
        FakeApiServer.Admission a = admission;
        String refusal = a == null ? null : a.review(operation, type.group(), type.version(), type.plural(), namespace,
                body, dryRun);
        if (refusal != null) {
            throw ApiError.badRequest(refusal);
        }
        return body;
    }

    ApiHandler(ResourceCatalog catalog, ObjectStore store, WatchStreams watches) {
        this.catalog = catalog;
        this.store = store;
        this.openApi = new OpenApiDocuments(catalog);
        this.watches = watches;
    }

    /** The requests served so far, as {@code METHOD path?query -> code}, oldest first. */
    List<String> requestLog() {
        synchronized (requestLog) {
            return List.copyOf(requestLog);
        }
    }

    @Override
    public void handle(HttpExchange exchange) throws IOException {
        String method = exchange.getRequestMethod();
        String rawQuery = exchange.getRequestURI().getRawQuery();
        String path = exchange.getRequestURI().getPath();
        int code;
        try {
            code = route(exchange, method, path, query(rawQuery));
        } catch (ApiError e) {
            code = e.code();
            send(exchange, e.code(), e.status());
        } catch (RuntimeException e) {
            ApiError internal = new ApiError(500, "InternalError", "stand-in failure: " + e, null, null);
            code = 500;
            send(exchange, 500, internal.status());
        } finally {
            exchange.close();
        }
        synchronized (requestLog) {
            requestLog.addLast(method + " " + path + (rawQuery == null ? "" : "?" + rawQuery) + " -> " + code);
            if (requestLog.size() > REQUEST_LOG_LIMIT) {
                requestLog.removeFirst();
            }
        }
    }

    private int route(HttpExchange exchange, String method, String path, Map<String, String> query) throws IOException {
        String[] segments = Arrays.stream(path.split("/")).filter(s -> !s.isEmpty()).toArray(String[]::new);
        if (segments.length == 0) {
            throw ApiError.notFoundPath(path);
        }
        if (TokenReviews.isReviewPath(segments)) {
            requirePost(method);
            return send(exchange, 201, tokenReviews.review(body(exchange)));
        }
        if (SubjectAccessReviews.isReviewPath(segments)) {
            requirePost(method);
            return send(exchange, 201, accessReviews.review(body(exchange)));
        }
        switch (segments[0]) {
            case "version" -> {
                return send(exchange, 200, OpenApiDocuments.version());
            }
            case "healthz", "readyz", "livez" -> {
                return sendText(exchange, 200, "ok");
            }
            case "openapi" -> {
                return openApi(exchange, path, segments);
            }
            case "api" -> {
                if (segments.length == 1) {
                    return send(exchange, 200, catalog.coreVersions(localAddress(exchange)));
                }
                if (segments.length == 2) {
                    return send(exchange, 200, catalog.resourceList("", segments[1])
                            .orElseThrow(() -> ApiError.notFoundPath(path)));
                }
                return resource(exchange, method, "", segments[1], Arrays.copyOfRange(segments, 2, segments.length),
                        query, path);
            }
            case "apis" -> {
                if (segments.length == 1) {
                    return send(exchange, 200, catalog.groupList());
                }
                if (segments.length == 2) {
                    return send(exchange, 200, catalog.group(segments[1]).orElseThrow(() -> ApiError.notFoundPath(path)));
                }
                if (segments.length == 3) {
                    return send(exchange, 200, catalog.resourceList(segments[1], segments[2])
                            .orElseThrow(() -> ApiError.notFoundPath(path)));
                }
                return resource(exchange, method, segments[1], segments[2],
                        Arrays.copyOfRange(segments, 3, segments.length), query, path);
            }
            default -> throw ApiError.notFoundPath(path);
        }
    }

    /** Reviews are create-only. */
    private static void requirePost(String method) {
        if (!method.equals("POST")) {
            throw new ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested "
                    + "resource", null, null);
        }
    }

    private int openApi(HttpExchange exchange, String path, String[] segments) throws IOException {
        if (segments.length >= 2 && segments[1].equals("v3")) {
            if (segments.length == 2) {
                return send(exchange, 200, openApi.index());
            }
            String gv = String.join("/", Arrays.copyOfRange(segments, 2, segments.length));
            return send(exchange, 200, openApi.groupVersion(gv).orElseThrow(() -> ApiError.notFoundPath(path)));
        }
        if (segments.length == 2 && segments[1].equals("v2")) {
            return openApiV2(exchange);
        }
        throw ApiError.notFoundPath(path);
    }

    /**
     * {@code /openapi/v2}: an empty Swagger document (no paths, no definitions). kubectl 1.27
     * downloads it before validating and gives up when it is missing; with no definitions it
     * leaves validation to the server (which it learns from the v3 index) and computes patches
     * from its compiled-in types. kubectl asks for protobuf (gnostic's {@code Document}), other
     * clients for JSON.
     */
    private static int openApiV2(HttpExchange exchange) throws IOException {
        String accept = Optional.ofNullable(exchange.getRequestHeaders().getFirst("Accept")).orElse("");
        if (accept.contains("protobuf")) {
            byte[] bytes = OpenApiDocuments.emptySwaggerProtobuf();
            exchange.getResponseHeaders().set("Content-Type", "application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
            exchange.sendResponseHeaders(200, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
            return 200;
        }
        return send(exchange, 200, OpenApiDocuments.emptySwagger());
    }

    private int resource(HttpExchange exchange, String method, String group, String version, String[] rest,
                         Map<String, String> query, String path) throws IOException {
        String namespace = null;
        if (rest.length >= 3 && rest[0].equals("namespaces")
                && catalog.find(group, version, rest[2]).map(ResourceType::namespaced).orElse(false)) {
            namespace = rest[1];
            rest = Arrays.copyOfRange(rest, 2, rest.length);
        }
        ResourceType type = catalog.find(group, version, rest[0]).orElseThrow(() -> ApiError.notFoundPath(path));
        String name = rest.length > 1 ? rest[1] : null;
        String subresource = rest.length > 2 ? rest[2] : null;
        boolean approval = "approval".equals(subresource) && type.approvalSubresource();
        if (rest.length > 3 || (subresource != null && !approval
                && !(subresource.equals("status") && type.statusSubresource()))) {
            throw ApiError.notFoundPath(path);
        }
        if (type.namespaced() && name != null && namespace == null) {
            throw ApiError.notFoundPath(path);
        }
        boolean status = subresource != null;
        boolean dryRun = query.containsKey("dryRun");
        if (!method.equals("GET") && forbiddenWrites.contains(type.plural() + " " + namespace)) {
            throw ApiError.forbidden(type.plural(), method, namespace);
        }
        if (name == null) {
            return switch (method) {
                case "GET" -> "true".equals(query.get("watch")) || "1".equals(query.get("watch"))
                        ? watches.serve(exchange, type, namespace, query)
                        : send(exchange, 200, list(type, namespace, query));
                case "POST" -> sendWritten(exchange, dryRun ? 200 : 201,
                        served(type, store.create(type, createNamespace(type, namespace, exchange),
                        admitted("CREATE", type, namespace, body(exchange), dryRun), dryRun)));
                case "DELETE" -> send(exchange, 200, deleteCollection(type, namespace, query));
                default -> throw ApiError.methodNotAllowed(method);
            };
        }
        final String ns = namespace;
        if (type.approvalSubresource() && status && method.equals("PUT")) {
            // the two CSR subresources each own part of the status, as on the real server
            JsonObject body = body(exchange);
            return send(exchange, 200, served(type, store.modify(type, ns, name, true, dryRun, current ->
                    approval ? CsrSubresources.approved(current, body) : CsrSubresources.signed(current, body))));
        }
        return switch (method) {
            case "GET" -> send(exchange, 200, served(type, store.get(type, ns, name)
                    .orElseThrow(() -> ApiError.notFound(type, name))));
            case "PUT" -> sendWritten(exchange, 200, served(type, store.update(type, ns, name,
                    status ? body(exchange) : admitted("UPDATE", type, ns, body(exchange), dryRun), status, dryRun)));
            case "PATCH" -> patch(exchange, type, ns, name, status, dryRun, query.getOrDefault("fieldManager", ""));
            case "DELETE" -> {
                JsonObject options = bodyOrEmpty(exchange);
                JsonObject preconditions = options.has("preconditions") ? options.getAsJsonObject("preconditions")
                        : new JsonObject();
                yield sendWritten(exchange, 200, served(type, store.delete(type, ns, name, Json.string(preconditions, "uid"),
                        Json.string(preconditions, "resourceVersion"), dryRun)));
            }
            default -> throw ApiError.methodNotAllowed(method);
        };
    }

    /** POST to a namespaced collection needs the namespace in the path, as the real server. */
    private static String createNamespace(ResourceType type, String namespace, HttpExchange exchange) {
        if (type.namespaced() && namespace == null) {
            throw ApiError.notFoundPath(exchange.getRequestURI().getPath());
        }
        return namespace;
    }

    private int patch(HttpExchange exchange, ResourceType type, String namespace, String name, boolean status,
                      boolean dryRun, String fieldManager) throws IOException {
        String contentType = Optional.ofNullable(exchange.getRequestHeaders().getFirst("Content-Type")).orElse("")
                .split(";")[0].trim();
        String text = new String(exchange.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        switch (contentType) {
            case "application/merge-patch+json" -> {
                JsonElement patch = parseJson(text);
                return sendWritten(exchange, 200, served(type, store.modify(type, namespace, name, status, dryRun,
                        current -> Patches.merge(current, patch).getAsJsonObject())));
            }
            case "application/strategic-merge-patch+json" -> {
                if (type.custom()) {
                    throw ApiError.unsupportedMediaType(contentType);
                }
                JsonElement patch = parseJson(text);
                return sendWritten(exchange, 200, served(type, store.modify(type, namespace, name, status, dryRun,
                        current -> Patches.strategic(current, patch).getAsJsonObject())));
            }
            case "application/json-patch+json" -> {
                JsonElement patch = parseJson(text);
                return sendWritten(exchange, 200, served(type, store.modify(type, namespace, name, status, dryRun,
                        current -> Patches.jsonPatch(current, patch).getAsJsonObject())));
            }
            case "application/apply-patch+yaml", "application/apply-patch+cbor" -> {
                // server-side apply without managed fields: the applied configuration is merged
                // into the object (created when missing); conflicts between managers are not tracked
                List<JsonObject> docs = Json.yamlDocuments(text);
                if (docs.size() != 1) {
                    throw ApiError.badRequest("an apply patch must be one object");
                }
                JsonObject applied = docs.get(0);
                String appliedKey = String.join("/", type.plural(), String.valueOf(namespace), name, fieldManager);
                if (store.get(type, namespace, name).isEmpty()) {
                    if (!dryRun) {
                        lastApplied.put(appliedKey, applied);
                    }
                    Json.metadata(applied).addProperty("name", name);
                    return sendWritten(exchange, 201, served(type, store.create(type, namespace, applied, dryRun)));
                }
                // what this manager applied last time and applies no more is removed, as managed fields do
                JsonObject withdrawn = Patches.withdrawn(lastApplied.get(appliedKey), applied);
                JsonObject written = store.modify(type, namespace, name, status, dryRun,
                        current -> (type.custom() ? Patches.merge(current, applied)
                                : Patches.strategic(Patches.strategic(current, withdrawn), applied)).getAsJsonObject());
                if (!dryRun) {
                    lastApplied.put(appliedKey, applied);
                }
                return sendWritten(exchange, 200, served(type, written));
            }
            default -> throw ApiError.unsupportedMediaType(contentType);
        }
    }

    private JsonObject list(ResourceType type, String namespace, Map<String, String> query) {
        Predicate<JsonObject> selector = Selector.of(query.get("labelSelector"), query.get("fieldSelector"));
        ObjectStore.Snapshot snapshot = store.list(type, namespace);
        notOlderThan(query.get("resourceVersion"), snapshot.revision());
        List<JsonObject> items = snapshot.items().stream().filter(selector).toList();
        long revision = snapshot.revision();
        int offset = 0;
        String token = query.get("continue");
        if (token != null && !token.isEmpty()) {
            String[] parts = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8).split(":");
            offset = Integer.parseInt(parts[1]);
        }
        int limit = query.containsKey("limit") ? Integer.parseInt(query.get("limit")) : 0;
        int end = limit > 0 ? Math.min(items.size(), offset + limit) : items.size();
        JsonArray array = new JsonArray();
        for (JsonObject o : items.subList(Math.min(offset, items.size()), end)) {
            array.add(served(type, o));
        }
        JsonObject meta = new JsonObject();
        meta.addProperty("resourceVersion", Long.toString(revision));
        if (end < items.size()) {
            // the next page is served from the then-current objects, not from this revision
            meta.addProperty("continue", Base64.getUrlEncoder().encodeToString((revision + ":" + end)
                    .getBytes(StandardCharsets.UTF_8)));
            meta.addProperty("remainingItemCount", items.size() - end);
        }
        JsonObject list = new JsonObject();
        list.addProperty("kind", type.listKind());
        list.addProperty("apiVersion", type.apiVersion());
        list.add("metadata", meta);
        list.add("items", array);
        return list;
    }

    /**
     * A list from a resourceVersion is served from a state at least that new. The real server
     * waits a few seconds for its watch cache to get there, then answers 504; this one, whose
     * state is always current, answers at once: that version lies ahead of it (after
     * {@link FakeApiServer#restartWithResetVersions()}).
     */
    private static void notOlderThan(String resourceVersion, long current) {
        if (resourceVersion == null || resourceVersion.isEmpty() || resourceVersion.equals("0")) {
            return;
        }
        long requested;
        try {
            requested = Long.parseLong(resourceVersion);
        } catch (NumberFormatException e) {
            throw ApiError.badRequest("invalid resource version \"" + resourceVersion + "\"");
        }
        if (requested > current) {
            throw ApiError.tooLargeResourceVersion(requested, current);
        }
    }

    private JsonObject deleteCollection(ResourceType type, String namespace, Map<String, String> query) {
        Predicate<JsonObject> selector = Selector.of(query.get("labelSelector"), query.get("fieldSelector"));
        JsonArray deleted = new JsonArray();
        for (JsonObject o : store.list(type, namespace).items()) {
            if (selector.test(o)) {
                deleted.add(served(type, store.delete(type, Json.string(o, "metadata", "namespace"),
                        Json.string(o, "metadata", "name"), null, null, query.containsKey("dryRun"))));
            }
        }
        JsonObject list = new JsonObject();
        list.addProperty("kind", type.listKind());
        list.addProperty("apiVersion", type.apiVersion());
        JsonObject meta = new JsonObject();
        meta.addProperty("resourceVersion", Long.toString(store.revision()));
        list.add("metadata", meta);
        list.add("items", deleted);
        return list;
    }

    /** The object as the requested version serves it: every version shares the stored fields. */
    static JsonObject served(ResourceType type, JsonObject o) {
        JsonObject copy = o.deepCopy();
        copy.addProperty("apiVersion", type.apiVersion());
        copy.addProperty("kind", type.kind());
        return copy;
    }

    private static JsonObject body(HttpExchange exchange) throws IOException {
        byte[] bytes = exchange.getRequestBody().readAllBytes();
        String contentType = Optional.ofNullable(exchange.getRequestHeaders().getFirst("Content-Type")).orElse("");
        if (ProtobufBodies.isProtobuf(contentType)) {
            return ProtobufBodies.decode(bytes);
        }
        String text = new String(bytes, StandardCharsets.UTF_8);
        if (contentType.contains("yaml")) {
            List<JsonObject> docs = Json.yamlDocuments(text);
            if (docs.size() != 1) {
                throw ApiError.badRequest("the request body must be one object");
            }
            return docs.get(0);
        }
        if (contentType.contains("protobuf") || contentType.contains("cbor")) {
            throw ApiError.unsupportedMediaType(contentType);
        }
        JsonElement e = parseJson(text);
        if (!e.isJsonObject()) {
            throw ApiError.badRequest("the request body must be a JSON object");
        }
        return e.getAsJsonObject();
    }

    private static JsonObject bodyOrEmpty(HttpExchange exchange) throws IOException {
        byte[] bytes = exchange.getRequestBody().readAllBytes();
        if (bytes.length == 0) {
            return new JsonObject();
        }
        JsonElement e = parseJson(new String(bytes, StandardCharsets.UTF_8));
        return e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    private static JsonElement parseJson(String text) {
        try {
            return Json.parse(text);
        } catch (RuntimeException e) {
            throw ApiError.badRequest("the request body is not valid JSON: " + e.getMessage());
        }
    }

    private static Map<String, String> query(String raw) {
        Map<String, String> out = new HashMap<>();
        if (raw == null || raw.isEmpty()) {
            return out;
        }
        for (String pair : raw.split("&")) {
            int eq = pair.indexOf('=');
            String key = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String value = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.put(key, value);
        }
        return out;
    }

    private static String localAddress(HttpExchange exchange) {
        return exchange.getLocalAddress().getHostString() + ":" + exchange.getLocalAddress().getPort();
    }

    static int send(HttpExchange exchange, int code, JsonObject body) throws IOException {
        byte[] bytes = Json.GSON.toJson(body).getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "application/json");
        exchange.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
        return code;
    }

    private static int sendText(HttpExchange exchange, int code, String text) throws IOException {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
        exchange.sendResponseHeaders(code, bytes.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(bytes);
        }
        return code;
    }
}
