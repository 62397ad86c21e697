package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.model.Proxy;
import io.meshpilot.xds.Connection;
import io.meshpilot.xds.TypeUrls;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;

/**
 * istiod's JSON shapes of its xDS debug endpoints (pilot/pkg/xds/debug.go): {@code AdsClients}
 * for {@code /debug/adsz} and {@code /debug/connections}, {@code SyncStatus} for
 * {@code /debug/syncz}. Go's {@code omitempty} is followed: empty strings and empty maps are left
 * out, a {@code time.Time} never is (its zero value prints as {@value #GO_ZERO_TIME}).
 */
final class XdsDebugJson {
    static final String GO_ZERO_TIME = "0001-01-01T00:00:00Z";

    /** The four types SyncStatus has fields for, by the prefix of those fields. */
    private static final Map<String, String> SYNC_FIELDS = Map.of(
            TypeUrls.CLUSTER, "cluster", TypeUrls.LISTENER, "listener", TypeUrls.ROUTE, "route",
            TypeUrls.ENDPOINT, "endpoint", TypeUrls.EXTENSION_CONFIG, "extensionconfig");

    private XdsDebugJson() {
    }

    /**
     * {@code AdsClients}: {@code totalClients} and, when there are any, {@code clients}. With
     * {@code details} (adsz) each client also has its proxy's labels, metadata, locality and
     * watched resource names per type URL; without (connections) only id, time and address.
     * Our {@code unsent} and {@code replaced} (responses waiting for a slow reader) and the
     * caller's verified {@code identities} are extra fields, which istiod's readers skip.
     */
    static JsonObject adsClients(Collection<Connection> connections, boolean details) {
        JsonObject out = new JsonObject();
        out.addProperty("totalClients", connections.size());
        JsonArray clients = new JsonArray();
        for (Connection c : connections) {
            JsonObject o = new JsonObject();
            o.addProperty("connectionId", c.id());
            o.addProperty("connectedAt", c.connectedAt().toString());
            o.addProperty("address", c.peer());
            if (details) {
                Proxy p = c.proxy();
                putNonEmpty(o, "labels", RegistryJson.map(p.labels()));
                putNonEmpty(o, "metadata", RegistryJson.map(p.metadata()));
                o.add("locality", locality(p));
                JsonObject watches = new JsonObject();
                new TreeMap<>(c.watches()).forEach((type, w) ->
                        watches.add(type, RegistryJson.strings(w.names().stream().sorted().toList())));
                putNonEmpty(o, "watches", watches);
            } else {
                o.addProperty("unsent", c.unsent());
                o.addProperty("replaced", c.replaced());
                o.add("identities", RegistryJson.strings(c.identities()));
            }
            clients.add(o);
        }
        if (!clients.isEmpty()) {
            out.add("clients", clients);
        }
        return out;
    }

    /**
     * {@code SyncStatus} of one connection: {@code proxy} is istiod's proxy ID, the third
     * {@code ~} field of the node id ({@code name.namespace}); nonces sent and ACKed per type;
     * {@code resources} per type URL with the last NACK's error as {@code lastError}.
     */
    static JsonObject syncStatus(Connection c) {
        Proxy p = c.proxy();
        JsonObject o = new JsonObject();
        putNonEmpty(o, "cluster_id", p.clusterId());
        putNonEmpty(o, "proxy", p.workloadId());
        o.addProperty("proxy_type", p.type().name().toLowerCase(Locale.ROOT));
        putNonEmpty(o, "istio_version", p.istioVersion());
        Map<String, Connection.Watch> watches = new TreeMap<>(c.watches());
        for (String type : List.of(TypeUrls.CLUSTER, TypeUrls.LISTENER, TypeUrls.ROUTE, TypeUrls.ENDPOINT,
                TypeUrls.EXTENSION_CONFIG)) {
            Connection.Watch w = watches.get(type);
            if (w != null) {
                putNonEmpty(o, SYNC_FIELDS.get(type) + "_sent", w.nonceSent());
                putNonEmpty(o, SYNC_FIELDS.get(type) + "_acked", w.nonceAcked());
            }
        }
        JsonObject resources = new JsonObject();
        watches.forEach((type, w) -> {
            JsonObject r = new JsonObject();
            putNonEmpty(r, "sent", w.nonceSent());
            putNonEmpty(r, "acked", w.nonceAcked());
            r.addProperty("sentTime", goTime(w.lastSent()));
            putNonEmpty(r, "lastError", w.nackError());
            resources.add(type, r);
        });
        putNonEmpty(o, "resources", resources);
        return o;
    }

    /** Envoy's core.Locality as Go's encoding/json prints the generated struct (proto field names). */
    private static JsonObject locality(Proxy p) {
        JsonObject l = new JsonObject();
        putNonEmpty(l, "region", p.locality().region());
        putNonEmpty(l, "zone", p.locality().zone());
        putNonEmpty(l, "sub_zone", p.locality().subzone());
        return l;
    }

    private static String goTime(Instant t) {
        return t == null ? GO_ZERO_TIME : t.toString();
    }

    private static void putNonEmpty(JsonObject o, String key, String value) {
        if (value != null && !value.isEmpty()) {
            o.addProperty(key, value);
        }
    }

    private static void putNonEmpty(JsonObject o, String key, JsonObject value) {
        if (!value.isEmpty()) {
            o.add(key, value);
        }
    }
}
