package io.meshpilot.logging;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import com.google.gson.JsonPrimitive;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.util.RequestBodies;
import java.io.IOException;
import java.io.InputStream;
import java.lang.System.Logger.Level;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * istiod's ControlZ logging-scopes topic (pkg/ctrlz/topics/scopes.go) where istiod serves it:
 * {@code localhost:9876} unless {@code --ctrlz_port}/{@code --ctrlz_address} say otherwise,
 * which is where {@code istioctl admin log} port-forwards to.
 * <ul>
 *   <li>{@code GET /scopej/}: every scope, by name, as
 *       {@code {name, description, output_level, stack_trace_level, log_callers}}</li>
 *   <li>{@code GET /scopej/<scope>}: one scope; 400 {@code unknown scope name: x}</li>
 *   <li>{@code PUT /scopej/<scope>} with such an object: sets the levels given (an empty or
 *       absent level leaves it) and {@code log_callers} (absent means false, as istiod);
 *       202</li>
 * </ul>
 * and the pages {@code istioctl dashboard controlz} opens: the home page {@code /} linking
 * the topics, {@code /scopez/} (the scopes as HTML), and Memory Usage, Process Info and
 * Version Info as {@code /memz/}, {@code /procz/}, {@code /versionz/} HTML and
 * {@code /memj/}, {@code /procj/}, {@code /versionj/} JSON ({@code PUT /memj/forcecollection}
 * asks for a collection, 202) ({@link ControlZTopics}). The environment topic is not served:
 * the environment may hold secrets.
 */
public final class ControlZ implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ControlZ.class.getName());
    public static final int DEFAULT_PORT = 9876;
    private static final String PREFIX = "/scopej";

    private static final String HTML = "text/html; charset=utf-8";
    private static final String JSON = "application/json; charset=utf-8";

    private final HttpServer server;
    private final LiveScopes scopes;
    private final Map<String, String> buildInfo;

    private ControlZ(HttpServer server, LiveScopes scopes, Map<String, String> buildInfo) {
        this.server = server;
        this.scopes = scopes;
        this.buildInfo = Collections.unmodifiableMap(new LinkedHashMap<>(buildInfo)); // in istiod's key order
    }

    /**
     * Listens on {@code address:port} ({@code *} is every address). As istiod, a ControlZ that
     * cannot listen is logged and the server runs without it: null then.
     *
     * @param buildInfo istiod's BuildInfo keys and values, what Version Info shows
     */
    public static ControlZ start(String address, int port, LiveScopes scopes, Map<String, String> buildInfo) {
        try {
            InetSocketAddress bind = address.equals("*") ? new InetSocketAddress(port)
                    : new InetSocketAddress(InetAddress.getByName(address), port);
            HttpServer server = HttpServer.create(bind, 16);
            ControlZ z = new ControlZ(server, scopes, buildInfo);
            server.createContext(PREFIX, z::handle);
            server.createContext("/", z::page);
            server.createContext("/memj", z::memory);
            server.setExecutor(null);
            server.start();
            InetSocketAddress at = server.getAddress();
            LOG.log(Level.INFO, "ControlZ available at " + at.getAddress().getHostAddress() + ":" + at.getPort());
            return z;
        } catch (IOException | RuntimeException e) {
            LOG.log(Level.ERROR, "Unable to start ControlZ on " + address + ":" + port + ": " + e);
            return null;
        }
    }

    /** The bound port. */
    public int port() {
        return server.getAddress().getPort();
    }

    /** The home page and the topics' pages; anything else is Go's 404. */
    private void page(HttpExchange ex) throws IOException {
        try (ex) {
            if (!ex.getRequestMethod().equals("GET")) {
                send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
                return;
            }
            switch (ex.getRequestURI().getPath()) {
                case "/" -> send(ex, 200, HTML, ControlZTopics.homePage());
                case "/scopez", "/scopez/" -> send(ex, 200, HTML, ControlZTopics.scopesPage(scopes.snapshot()));
                case "/memz", "/memz/" -> send(ex, 200, HTML, ControlZTopics.objectPage("Memory Usage",
                        ControlZTopics.memory()));
                case "/procz", "/procz/" -> send(ex, 200, HTML, ControlZTopics.objectPage("Process Info",
                        ControlZTopics.process()));
                case "/versionz", "/versionz/" -> send(ex, 200, HTML, ControlZTopics.objectPage("Version Info",
                        ControlZTopics.version(buildInfo)));
                case "/procj", "/procj/" -> send(ex, 200, JSON, ControlZTopics.process() + "\n");
                case "/versionj", "/versionj/" -> send(ex, 200, JSON, ControlZTopics.version(buildInfo) + "\n");
                default -> send(ex, 404, "text/plain; charset=utf-8", "404 page not found\n");
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "ControlZ request failed: " + e);
        }
    }

    /** {@code GET /memj/}, and {@code PUT /memj/forcecollection} (istiod runs the collector: 202). */
    private void memory(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            String method = ex.getRequestMethod();
            if ((path.equals("/memj") || path.equals("/memj/")) && method.equals("GET")) {
                send(ex, 200, JSON, ControlZTopics.memory() + "\n");
            } else if (path.equals("/memj/forcecollection") && method.equals("PUT")) {
                System.gc(); // asked for by the operator, as istiod's runtime.GC()
                send(ex, 202, "text/plain; charset=utf-8", "");
            } else {
                send(ex, 404, "text/plain; charset=utf-8", "404 page not found\n");
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "ControlZ request failed: " + e);
        }
    }

    private void handle(HttpExchange ex) throws IOException {
        try (ex) {
            String path = ex.getRequestURI().getPath();
            String rest = path.length() <= PREFIX.length() ? "" : path.substring(PREFIX.length());
            if (!rest.isEmpty() && !rest.startsWith("/")) {
                send(ex, 404, "text/plain; charset=utf-8", "404 page not found\n");
                return;
            }
            String name = rest.isEmpty() ? "" : rest.substring(1);
            String method = ex.getRequestMethod();
            if (name.isEmpty()) {
                if (method.equals("GET")) {
                    StringBuilder b = new StringBuilder("[");
                    scopes.snapshot().forEach((s, st) -> b.append(b.length() > 1 ? "," : "").append(json(s, st)));
                    send(ex, 200, JSON, b.append("]\n").toString());
                } else {
                    send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
                }
                return;
            }
            var scope = LogScopes.byName(name);
            if (scope.isEmpty()) {
                send(ex, 400, "text/plain; charset=utf-8", "unknown scope name: " + name);
                return;
            }
            switch (method) {
                case "GET" -> send(ex, 200, JSON,
                        json(scope.get(), scopes.get(name)) + "\n");
                case "PUT" -> put(ex, name);
                default -> send(ex, 405, "text/plain; charset=utf-8", "method not allowed\n");
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "ControlZ request failed: " + e);
        }
    }

    private void put(HttpExchange ex, String name) throws IOException {
        ScopeSettings current = scopes.get(name);
        JsonObject body;
        try (InputStream in = ex.getRequestBody()) {
            // bounded as every listener: ControlZ may listen off-host (--ctrlz_address '*')
            byte[] raw = RequestBodies.read(in, HttpLimits.MAX_REQUEST_BODY);
            JsonElement e = JsonParser.parseString(new String(raw, StandardCharsets.UTF_8));
            if (!e.isJsonObject()) {
                throw new JsonParseException("expected a JSON object");
            }
            body = e.getAsJsonObject();
        } catch (RequestBodies.TooLarge e) {
            send(ex, 413, "text/plain; charset=utf-8", e.getMessage());
            return;
        } catch (JsonParseException | IllegalStateException e) {
            send(ex, 400, "text/plain; charset=utf-8", "unable to decode request: " + e.getMessage());
            return;
        }
        try {
            LogLevel output = level(body, "output_level", current.outputLevel());
            LogLevel stack = level(body, "stack_trace_level", current.stackTraceLevel());
            boolean callers = body.has("log_callers") && !body.get("log_callers").isJsonNull()
                    && bool(body.get("log_callers"));
            ScopeSettings next = new ScopeSettings(output, stack, callers);
            scopes.set(name, next);
            LOG.log(Level.INFO, "ControlZ: scope " + name + " output_level=" + output.label()
                    + " stack_trace_level=" + stack.label() + " log_callers=" + callers);
            send(ex, 202, "text/plain; charset=utf-8", "");
        } catch (IllegalArgumentException e) {
            send(ex, 400, "text/plain; charset=utf-8", "unable to decode request: " + e.getMessage());
        }
    }

    private static LogLevel level(JsonObject body, String key, LogLevel unchanged) {
        JsonElement e = body.get(key);
        if (e == null || e.isJsonNull()) {
            return unchanged;
        }
        if (!(e instanceof JsonPrimitive p) || !p.isString()) {
            throw new IllegalArgumentException(key + ": expected a string");
        }
        String v = p.getAsString();
        if (v.isEmpty()) {
            return unchanged;
        }
        return LogLevel.byLabel(v).orElseThrow(() -> new IllegalArgumentException(key + ": unknown level '" + v
                + "' (levels: " + LogLevel.labels() + ")"));
    }

    private static boolean bool(JsonElement e) {
        if (e instanceof JsonPrimitive p && p.isBoolean()) {
            return p.getAsBoolean();
        }
        throw new IllegalArgumentException("log_callers: expected true or false");
    }

    private static String json(LogScopes.Scope s, ScopeSettings st) {
        JsonObject o = new JsonObject();
        o.addProperty("name", s.name());
        o.addProperty("description", s.description());
        o.addProperty("output_level", st.outputLevel().label());
        o.addProperty("stack_trace_level", st.stackTraceLevel().label());
        o.addProperty("log_callers", st.logCallers());
        return o.toString();
    }

    private static void send(HttpExchange ex, int status, String contentType, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", contentType);
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            ex.getResponseBody().write(bytes);
        }
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
