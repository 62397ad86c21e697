package io.meshpilot.registry.ambient;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.protobuf.ByteString;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.NamespacedHostname;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpSyntaxException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.BiFunction;

/**
 * The waypoints as istiod reads them (pilot/pkg/serviceregistry/ambient/waypoints.go
 * gatewayToWaypointTransform): every Gateway whose status has an address, however it was
 * deployed; the address is the status's Hostname one (in the Gateway's namespace), else its first
 * valid IPAddress on the local network, with the HBONE port 15008; what it serves is its
 * {@code istio.io/waypoint-for} label, {@code service} by default. A waypoint the Gateways do
 * not give (the Gateway API is off, or the status writer has not written the address yet) is
 * looked up in {@code fallback}, the waypoints' managed Services.
 */
final class GatewayWaypoints implements Waypoints {
    private static final System.Logger LOG = System.getLogger(GatewayWaypoints.class.getName());
    static final int HBONE_PORT = 15008;

    /** A Gateway that is a waypoint, without its identities (they follow its pods). */
    private record GatewayWaypoint(String namespace, String name, GatewayAddress address, String trafficType) {
    }

    private final Waypoints fallback;
    private final BiFunction<String, String, List<String>> serviceAccounts;
    private volatile Map<String, GatewayWaypoint> byKey = Map.of();

    /**
     * @param fallback        the waypoints known otherwise
     * @param serviceAccounts a Gateway's ({@code namespace}, {@code name}) pods' service accounts, sorted
     */
    GatewayWaypoints(Waypoints fallback, BiFunction<String, String, List<String>> serviceAccounts) {
        this.fallback = fallback;
        this.serviceAccounts = serviceAccounts;
    }

    /**
     * Takes the Gateways as they are now.
     *
     * @param network the local network, which an IP address is on
     * @return whether the waypoints they give changed
     */
    boolean update(List<GatewayApiObject> gateways, String network) {
        Map<String, GatewayWaypoint> next = new TreeMap<>();
        for (GatewayApiObject g : gateways) {
            if (!g.kind().equals(GatewayApiKinds.GATEWAY)) {
                continue;
            }
            GatewayAddress address = address(g, network);
            if (address != null) {
                next.put(g.namespace() + "/" + g.name(), new GatewayWaypoint(g.namespace(), g.name(), address,
                        g.labels().getOrDefault(ServiceWaypoints.WAYPOINT_FOR, "service")));
            }
        }
        if (next.equals(byKey)) {
            return false;
        }
        byKey = Map.copyOf(next);
        return true;
    }

    @Override
    public Optional<Waypoint> find(String namespace, String name) {
        GatewayWaypoint g = byKey.get(namespace + "/" + name);
        return g == null ? fallback.find(namespace, name) : Optional.of(waypoint(g));
    }

    @Override
    public List<Waypoint> all() {
        Map<String, GatewayWaypoint> gateways = byKey;
        List<Waypoint> out = new ArrayList<>();
        gateways.values().forEach(g -> out.add(waypoint(g)));
        fallback.all().stream().filter(w -> !gateways.containsKey(w.key())).forEach(out::add);
        return out;
    }

    private Waypoint waypoint(GatewayWaypoint g) {
        return new Waypoint(g.namespace(), g.name(), g.address(), g.trafficType(),
                serviceAccounts.apply(g.namespace(), g.name()));
    }

    /** istiod's getGatewayAddress: a Hostname address first, else the first valid IPAddress; null when none. */
    static GatewayAddress address(GatewayApiObject gateway, String network) {
        List<JsonObject> addresses = new ArrayList<>();
        JsonElement list = gateway.status().get("addresses");
        if (list != null && list.isJsonArray()) {
            list.getAsJsonArray().forEach(a -> {
                if (a.isJsonObject()) {
                    addresses.add(a.getAsJsonObject());
                }
            });
        }
        for (JsonObject a : addresses) {
            if ("Hostname".equals(string(a, "type"))) {
                return GatewayAddress.newBuilder().setHostname(NamespacedHostname.newBuilder()
                        .setNamespace(gateway.namespace()).setHostname(string(a, "value"))).setHboneMtlsPort(HBONE_PORT).build();
            }
        }
        for (JsonObject a : addresses) {
            if ("IPAddress".equals(string(a, "type"))) {
                try {
                    ByteString ip = ByteString.copyFrom(IpAddr.parse(string(a, "value")).bytes());
                    return GatewayAddress.newBuilder().setAddress(NetworkAddress.newBuilder().setNetwork(network)
                            .setAddress(ip)).setHboneMtlsPort(HBONE_PORT).build();
                } catch (IpSyntaxException e) {
                    LOG.log(Level.WARNING, "Gateway " + gateway.namespace() + "/" + gateway.name()
                            + ": status address \"" + string(a, "value") + "\" is not an IP, skipped: " + e.getMessage());
                }
            }
        }
        return null;
    }

    private static String string(JsonObject o, String field) {
        JsonElement e = o.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
