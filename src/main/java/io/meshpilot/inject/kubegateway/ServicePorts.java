package io.meshpilot.inject.kubegateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The ports of a managed Gateway's Service, as istiod's extractServicePorts
 * (pilot/pkg/config/kube/gatewaycommon/deploymentcontroller.go) derives them: {@code status-port}
 * 15021 first, then one per distinct listener port in listener order, named after the listener
 * (periods to dashes, at most 63 characters, made unique with {@code -<port>}), its protocol
 * lowercased as the appProtocol; with QUIC listeners on, an HTTPS listener also gets a UDP port.
 */
public final class ServicePorts {
    /** One Service port. */
    public record Port(String name, int port, String protocol, String appProtocol) {
        JsonObject toJson() {
            JsonObject o = new JsonObject();
            o.addProperty("name", name);
            o.addProperty("port", port);
            o.addProperty("protocol", protocol);
            o.addProperty("appProtocol", appProtocol);
            return o;
        }
    }

    private static final int MAX_NAME = 63;

    private ServicePorts() {
    }

    /**
     * @param listeners    the Gateway's {@code spec.listeners} (then those of its accepted ListenerSets)
     * @param quicListeners PILOT_ENABLE_QUIC_LISTENERS
     */
    public static List<Port> of(List<JsonObject> listeners, boolean quicListeners) {
        List<Port> ports = new ArrayList<>();
        ports.add(new Port("status-port", 15021, "TCP", "tcp"));
        Set<Integer> seen = new HashSet<>();
        Set<String> usedNames = new HashSet<>(Set.of("status-port"));
        for (int i = 0; i < listeners.size(); i++) {
            JsonObject l = listeners.get(i);
            int port = intOf(l.get("port"));
            if (!seen.add(port)) {
                continue;
            }
            String protocol = stringOf(l.get("protocol")).toLowerCase(Locale.ROOT);
            String name = stringOf(l.get("name")).replace('.', '-');
            if (name.isEmpty()) { // the CRD requires a name; a listener without one still gets a port
                name = protocol + "-" + i;
            }
            name = unique(name, port, usedNames);
            ports.add(new Port(name, port, "TCP", protocol));
            if (quicListeners && protocol.equals("https")) {
                ports.add(new Port(unique(name + "-quic", port, usedNames), port, "UDP", protocol));
            }
        }
        return ports;
    }

    /** The name cut to 63 characters, suffixed with the port (then x's) while another port has it. */
    private static String unique(String name, int port, Set<String> used) {
        String base = name.length() > MAX_NAME ? name.substring(0, MAX_NAME) : name;
        String candidate = base;
        for (String suffix = "-" + port; used.contains(candidate); suffix += "x") {
            String trimmed = base.length() + suffix.length() > MAX_NAME ? base.substring(0, MAX_NAME - suffix.length()) : base;
            candidate = trimmed + suffix;
        }
        used.add(candidate);
        return candidate;
    }

    private static int intOf(JsonElement e) {
        return e != null && e.isJsonPrimitive() && e.getAsJsonPrimitive().isNumber() ? e.getAsInt() : 0;
    }

    private static String stringOf(JsonElement e) {
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
