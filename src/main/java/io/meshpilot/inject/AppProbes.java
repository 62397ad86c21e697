package io.meshpilot.inject;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's app probe rewrite (pkg/kube/inject/app_probe.go): the app containers' HTTP, TCP
 * and gRPC probes and HTTP/TCP lifecycle hooks are sent to the agent's status port under
 * {@code /app-health/<container>/readyz|livez|startupz} and
 * {@code /app-lifecycle/<container>/prestopz|poststartz}; the originals go to the agent in
 * ISTIO_KUBE_APP_PROBERS so it can run them inside the pod's network.
 */
final class AppProbes {
    private AppProbes() {
    }

    /** The ISTIO_KUBE_APP_PROBERS value (keys sorted, as Go writes a map), or null when there is nothing to run. */
    static String dump(JsonObject pod, int statusPort) {
        Map<String, JsonObject> out = new TreeMap<>();
        for (JsonObject c : appContainers(pod)) {
            String name = Pods.string(c, "name");
            Map<String, Integer> ports = new TreeMap<>();
            JsonElement ps = c.get("ports");
            if (ps != null && ps.isJsonArray()) {
                ps.getAsJsonArray().forEach(p -> {
                    String n = Pods.string(p.getAsJsonObject(), "name");
                    if (!n.isEmpty()) {
                        ports.put(n, p.getAsJsonObject().get("containerPort").getAsInt());
                    }
                });
            }
            put(out, "/app-health/" + name + "/readyz", prober(c.get("readinessProbe"), true), ports, statusPort);
            put(out, "/app-health/" + name + "/livez", prober(c.get("livenessProbe"), true), ports, statusPort);
            put(out, "/app-health/" + name + "/startupz", prober(c.get("startupProbe"), true), ports, statusPort);
            JsonElement lifecycle = c.get("lifecycle");
            if (lifecycle != null && lifecycle.isJsonObject()) {
                put(out, "/app-lifecycle/" + name + "/prestopz", prober(lifecycle.getAsJsonObject().get("preStop"), false),
                        ports, statusPort);
                put(out, "/app-lifecycle/" + name + "/poststartz",
                        prober(lifecycle.getAsJsonObject().get("postStart"), false), ports, statusPort);
            }
        }
        if (out.isEmpty()) {
            return null;
        }
        JsonObject all = new JsonObject();
        out.forEach(all::add);
        return all.toString();
    }

    /** istiod's mergeOrAppendProbers: the earlier injection's entries win over the new ones. */
    static String merge(String fresh, String earlier) {
        if (earlier == null || earlier.isEmpty()) {
            return fresh;
        }
        Map<String, JsonElement> all = new TreeMap<>();
        try {
            if (fresh != null) {
                all.putAll(JsonParser.parseString(fresh).getAsJsonObject().asMap());
            }
            all.putAll(JsonParser.parseString(earlier).getAsJsonObject().asMap());
        } catch (RuntimeException e) {
            return fresh; // an unreadable earlier value is replaced, as istiod does
        }
        JsonObject o = new JsonObject();
        all.forEach(o::add);
        return o.toString();
    }

    private static JsonObject prober(JsonElement probe, boolean withGrpc) {
        if (probe == null || !probe.isJsonObject()) {
            return null;
        }
        JsonObject p = probe.getAsJsonObject();
        JsonObject out = new JsonObject();
        for (String kind : withGrpc ? new String[] {"httpGet", "tcpSocket", "grpc"} : new String[] {"httpGet", "tcpSocket"}) {
            if (p.has(kind)) {
                out.add(kind, goOrder(kind, p.getAsJsonObject(kind)));
                if (p.has("timeoutSeconds") && p.get("timeoutSeconds").getAsInt() != 0) {
                    out.add("timeoutSeconds", p.get("timeoutSeconds"));
                }
                return out;
            }
        }
        return null;
    }

    /** The action's members in Go's struct order, as istiod writes them into ISTIO_KUBE_APP_PROBERS. */
    private static JsonObject goOrder(String kind, JsonObject action) {
        String[] order = switch (kind) {
            case "httpGet" -> new String[] {"path", "port", "host", "scheme", "httpHeaders"};
            case "tcpSocket" -> new String[] {"port", "host"};
            default -> new String[] {"port", "service"};
        };
        JsonObject out = new JsonObject();
        for (String k : order) {
            if (action.has(k)) {
                out.add(k, action.get(k).deepCopy());
            }
        }
        action.entrySet().forEach(e -> {
            if (!out.has(e.getKey())) {
                out.add(e.getKey(), e.getValue().deepCopy());
            }
        });
        return out;
    }

    private static void put(Map<String, JsonObject> out, String key, JsonObject prober, Map<String, Integer> ports,
                            int statusPort) {
        if (prober == null) {
            return;
        }
        if (!prober.has("grpc")) {
            JsonObject action = prober.has("httpGet") ? prober.getAsJsonObject("httpGet") : prober.getAsJsonObject("tcpSocket");
            JsonElement port = action.get("port");
            if (port == null) {
                return;
            }
            if (port.getAsJsonPrimitive().isString() && !port.getAsString().matches("[0-9]+")) {
                Integer resolved = ports.get(port.getAsString());
                if (resolved == null) {
                    return;
                }
                action.addProperty("port", resolved);
            } else if (port.getAsInt() == statusPort) {
                return;
            }
        }
        out.put(key, prober);
    }

    /** Points the app containers' probes and hooks at the status port. */
    static void rewrite(JsonObject pod, int statusPort) {
        for (JsonObject c : appContainers(pod)) {
            String name = Pods.string(c, "name");
            convert(c, "readinessProbe", "/app-health/" + name + "/readyz", statusPort, true);
            convert(c, "livenessProbe", "/app-health/" + name + "/livez", statusPort, true);
            convert(c, "startupProbe", "/app-health/" + name + "/startupz", statusPort, true);
            JsonElement lifecycle = c.get("lifecycle");
            if (lifecycle != null && lifecycle.isJsonObject()) {
                convert(lifecycle.getAsJsonObject(), "preStop", "/app-lifecycle/" + name + "/prestopz", statusPort, false);
                convert(lifecycle.getAsJsonObject(), "postStart", "/app-lifecycle/" + name + "/poststartz", statusPort,
                        false);
            }
        }
    }

    /** The pod's init containers and containers, istio-proxy left out. */
    private static List<JsonObject> appContainers(JsonObject pod) {
        List<JsonObject> out = new ArrayList<>();
        for (String field : new String[] {"initContainers", "containers"}) {
            for (JsonElement e : Pods.array(pod, field)) {
                JsonObject c = e.getAsJsonObject();
                if (!Pods.string(c, "name").equals(SidecarTemplate.PROXY)) {
                    out.add(c);
                }
            }
        }
        return out;
    }

    private static void convert(JsonObject holder, String field, String url, int statusPort, boolean grpc) {
        JsonElement e = holder.get(field);
        if (e == null || !e.isJsonObject()) {
            return;
        }
        JsonObject probe = e.getAsJsonObject();
        JsonObject get;
        if (probe.has("httpGet")) {
            get = probe.getAsJsonObject("httpGet");
        } else if (probe.has("tcpSocket") || (grpc && probe.has("grpc"))) {
            probe.remove("tcpSocket");
            probe.remove("grpc");
            get = new JsonObject();
            probe.add("httpGet", get);
        } else {
            return;
        }
        get.addProperty("port", statusPort);
        get.addProperty("path", url);
        if ("HTTPS".equals(Pods.string(get, "scheme"))) {
            get.addProperty("scheme", "HTTP");
        }
    }
}
