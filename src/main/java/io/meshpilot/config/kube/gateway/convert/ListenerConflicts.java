package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Which listeners of a Gateway and its ListenerSets conflict (istiod's gatewaycommon
 * listener_conflict.go, the Gateway API's listener merging rules): the Gateway's own listeners
 * come first, then the ListenerSets' oldest first (then by namespace/name); a listener that is
 * not distinct from one accepted before it loses, with reason ProtocolConflict (TCP or UDP on
 * the same port as anything else, or two different protocols) or HostnameConflict (two HTTP,
 * HTTPS or TLS listeners on one port with the same hostname, unset being {@code *}).
 */
public final class ListenerConflicts {
    /** The losing listeners by owner (Gateway or ListenerSet key): listener name to reason. */
    private final Map<ConfigKey, Map<String, String>> conflicts;

    private ListenerConflicts(Map<ConfigKey, Map<String, String>> conflicts) {
        this.conflicts = conflicts;
    }

    private record Entry(ConfigKey owner, String name, int port, String protocol, String hostname) {
    }

    /**
     * @param gateway      the parent
     * @param listenerSets the ListenerSets attached to it and allowed by its {@code allowedListeners}
     */
    public static ListenerConflicts of(GatewayApiObject gateway, List<GatewayApiObject> listenerSets) {
        List<Entry> ordered = new ArrayList<>();
        for (JsonObject l : JsonFields.objects(gateway.spec(), "listeners")) {
            ordered.add(entry(gateway.key(), l, JsonFields.integer(l, "port", 0)));
        }
        List<GatewayApiObject> sets = new ArrayList<>(listenerSets);
        sets.sort(Comparator.comparing((GatewayApiObject s) -> Optional.ofNullable(s.creationTimestamp())
                .orElse(Instant.EPOCH)).thenComparing(s -> s.namespace() + "/" + s.name()));
        for (GatewayApiObject set : sets) {
            for (JsonObject l : JsonFields.objects(set.spec(), "listeners")) {
                ordered.add(entry(set.key(), l, ListenerSetConversion.defaultPort(l).orElse(0)));
            }
        }
        Map<ConfigKey, Map<String, String>> conflicts = new HashMap<>();
        List<Entry> accepted = new ArrayList<>();
        for (Entry e : ordered) {
            Optional<Entry> prior = accepted.stream().filter(p -> !distinct(e, p)).findFirst();
            if (prior.isPresent()) {
                conflicts.computeIfAbsent(e.owner(), k -> new HashMap<>()).put(e.name(), reason(e, prior.get()));
            } else {
                accepted.add(e);
            }
        }
        return new ListenerConflicts(conflicts);
    }

    /** No conflicts (classes without ListenerSet support are not checked, as istiod does not). */
    public static ListenerConflicts none() {
        return new ListenerConflicts(Map.of());
    }

    /** The conflicting listeners of {@code owner}: name to reason. */
    public Map<String, String> of(ConfigKey owner) {
        return conflicts.getOrDefault(owner, Map.of());
    }

    private static Entry entry(ConfigKey owner, JsonObject listener, int port) {
        String hostname = JsonFields.string(listener, "hostname");
        return new Entry(owner, JsonFields.string(listener, "name"), port, JsonFields.string(listener, "protocol"),
                hostname.isEmpty() ? "*" : hostname);
    }

    private static boolean tcpOrUdp(String protocol) {
        return protocol.equals("TCP") || protocol.equals("UDP");
    }

    private static boolean httpLike(String protocol) {
        return protocol.equals("HTTP") || protocol.equals("HTTPS") || protocol.equals("TLS");
    }

    private static boolean distinct(Entry a, Entry b) {
        if (a.port() != b.port()) {
            return true;
        }
        if (tcpOrUdp(a.protocol()) && httpLike(b.protocol()) || httpLike(a.protocol()) && tcpOrUdp(b.protocol())) {
            return false;
        }
        if (tcpOrUdp(a.protocol()) && tcpOrUdp(b.protocol())) {
            return false;
        }
        if (httpLike(a.protocol()) && httpLike(b.protocol())) {
            return !a.hostname().equals(b.hostname());
        }
        return !a.protocol().equals(b.protocol());
    }

    private static String reason(Entry a, Entry b) {
        if (tcpOrUdp(a.protocol()) && tcpOrUdp(b.protocol()) || !a.protocol().equals(b.protocol())) {
            return "ProtocolConflict";
        }
        return "HostnameConflict";
    }
}
