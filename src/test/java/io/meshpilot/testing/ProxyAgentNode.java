package io.meshpilot.testing;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

/**
 * The xDS node istio-agent sends for the {@code istio-proxy} container of an injected pod, as
 * its bootstrap builds it (istio's pkg/bootstrap/config.go {@code GetNodeMetaData}): the node id
 * {@code <type>~<ip>~<pod>.<namespace>~<namespace>.svc.cluster.local} with the type from the
 * container's {@code proxy <type>} arguments; metadata from the container's {@code ISTIO_META_*}
 * environment (prefix dropped), the pod's labels as the downward API mounts them (without
 * {@code pod-template-hash}), {@code POD_NAME}, {@code POD_NAMESPACE}, {@code SERVICE_ACCOUNT},
 * the agent's version, which is the injected image's tag, and {@code PROXY_CONFIG}: the agent's
 * effective ProxyConfig (pilot-agent's ConstructProxyConfig: the container's {@code PROXY_CONFIG}
 * over the defaults; bootstrap's {@code meta.ProxyConfig}), which makes the node istio-proxy.
 */
public record ProxyAgentNode(String type, String nodeId, Map<String, String> metadata) {
    private static final String META_PREFIX = "ISTIO_META_";
    /** mesh.DefaultProxyConfig's discoveryAddress, which the agent's config keeps unless the pod's sets one. */
    private static final String DEFAULT_DISCOVERY_ADDRESS = "istiod.istio-system.svc:15012";

    /** The node of {@code pod}'s istio-proxy container when the pod runs at {@code podIp}. */
    public static ProxyAgentNode of(JsonObject pod, String podIp) {
        JsonObject proxy = istioProxy(pod);
        var args = proxy.getAsJsonArray("args");
        if (args == null || args.size() < 2 || !args.get(0).getAsString().equals("proxy")) {
            throw new AssertionError("istio-proxy does not run `proxy <type>`: " + args);
        }
        Map<String, String> env = environment(pod, proxy, podIp);
        String name = env.get("POD_NAME");
        String namespace = env.get("POD_NAMESPACE");
        Map<String, String> metadata = new TreeMap<>();
        env.forEach((k, v) -> {
            if (k.startsWith(META_PREFIX)) {
                metadata.put(k.substring(META_PREFIX.length()), v);
            }
        });
        metadata.put("NAME", name);
        metadata.put("NAMESPACE", namespace);
        metadata.put("SERVICE_ACCOUNT", env.get("SERVICE_ACCOUNT"));
        metadata.put("INSTANCE_IPS", podIp);
        metadata.put("LABELS", labels(pod).toString());
        String image = proxy.get("image").getAsString();
        metadata.put("ISTIO_VERSION", image.substring(image.lastIndexOf(':') + 1));
        metadata.put("PROXY_CONFIG", proxyConfig(env.getOrDefault("PROXY_CONFIG", "{}")).toString());
        String type = args.get(1).getAsString();
        return new ProxyAgentNode(type, type + "~" + podIp + "~" + name + "." + namespace + "~" + namespace
                + ".svc.cluster.local", Map.copyOf(metadata));
    }

    /**
     * Another pod {@code pod} at {@code podIp} made from the same pod template, running as
     * {@code serviceAccount} (a replica when it is the same service account).
     */
    public ProxyAgentNode sibling(String pod, String podIp, String serviceAccount) {
        Map<String, String> m = new TreeMap<>(metadata);
        m.put("NAME", pod);
        m.put("INSTANCE_IPS", podIp);
        m.put("SERVICE_ACCOUNT", serviceAccount);
        String namespace = metadata.get("NAMESPACE");
        return new ProxyAgentNode(type, type + "~" + podIp + "~" + pod + "." + namespace + "~" + namespace
                + ".svc.cluster.local", Map.copyOf(m));
    }

    /** The effective ProxyConfig: the container's (defaults removed by injection) with the defaults the node needs. */
    private static JsonObject proxyConfig(String containerJson) {
        JsonObject config = containerJson.isBlank() ? new JsonObject()
                : JsonParser.parseString(containerJson).getAsJsonObject();
        if (!config.has("discoveryAddress")) {
            config.addProperty("discoveryAddress", DEFAULT_DISCOVERY_ADDRESS);
        }
        return config;
    }

    /** The container named istio-proxy, among the containers or (a native sidecar) the init containers. */
    public static JsonObject istioProxy(JsonObject pod) {
        JsonObject spec = pod.getAsJsonObject("spec");
        for (String list : new String[] {"containers", "initContainers"}) {
            if (spec.has(list)) {
                for (JsonElement c : spec.getAsJsonArray(list)) {
                    if (c.getAsJsonObject().get("name").getAsString().equals("istio-proxy")) {
                        return c.getAsJsonObject();
                    }
                }
            }
        }
        throw new AssertionError("no istio-proxy container in " + pod.getAsJsonObject("metadata"));
    }

    /** The container's environment as the kubelet sets it: literal values, and the downward API's fields. */
    private static Map<String, String> environment(JsonObject pod, JsonObject container, String podIp) {
        Map<String, String> env = new LinkedHashMap<>();
        for (JsonElement e : container.getAsJsonArray("env")) {
            JsonObject var = e.getAsJsonObject();
            String name = var.get("name").getAsString();
            if (var.has("value")) {
                env.put(name, var.get("value").getAsString());
            } else if (var.has("valueFrom") && var.getAsJsonObject("valueFrom").has("fieldRef")) {
                String path = var.getAsJsonObject("valueFrom").getAsJsonObject("fieldRef").get("fieldPath").getAsString();
                String value = field(pod, path, podIp);
                if (value != null) {
                    env.put(name, value);
                }
            }
        }
        return env;
    }

    private static String field(JsonObject pod, String path, String podIp) {
        JsonObject metadata = pod.getAsJsonObject("metadata");
        return switch (path) {
            case "metadata.name" -> metadata.get("name").getAsString();
            case "metadata.namespace" -> metadata.get("namespace").getAsString();
            case "spec.serviceAccountName" -> pod.getAsJsonObject("spec").get("serviceAccountName").getAsString();
            case "status.podIP" -> podIp;
            default -> null; // status.hostIP, status.podIPs, spec.nodeName: nothing the node metadata reads
        };
    }

    private static JsonObject labels(JsonObject pod) {
        JsonObject labels = pod.getAsJsonObject("metadata").getAsJsonObject("labels").deepCopy();
        labels.remove("pod-template-hash");
        return labels;
    }
}
