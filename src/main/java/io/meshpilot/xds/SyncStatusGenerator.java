package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Timestamp;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.admin.v3.UpdateFailureState;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ConfigStatus;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * istiod's xDS debug type {@code istio.io/debug/syncz} (what {@code istioctl proxy-status}
 * asks over ADS; statusgen.go {@code debugSyncz}): one {@code envoy.service.status.v3.ClientConfig}
 * per connected proxy, its node with CLUSTER_ID, NAMESPACE and ISTIO_VERSION (each only when
 * set), and per watched type (sorted by type URL) when it was last sent and whether that was
 * ACKed (SYNCED), is awaiting its ACK (STALE), was NACKed (ERROR, with the NACK's message) or
 * was never sent (NOT_SENT). Debug clients ({@code GENERATOR=event}: istioctl's own streams)
 * are no proxies and are left out. istiod reports only agent-run proxies (statusgen.go isProxy:
 * PROXY_CONFIG) and ztunnel; here every other connection is a row, plain Envoy included,
 * because plain Envoy is a documented client and {@code istioctl proxy-status} is its only view
 * of its sync state over xDS (filtering on {@code Proxy.istioProxy()} would hide it; docs/XDS.md).
 */
final class SyncStatusGenerator implements Generator {
    /** The GENERATOR of istio's adsc debug clients (istioctl). */
    static final String DEBUG_CLIENT_GENERATOR = "event";

    private final Supplier<Collection<Connection>> connections;
    private final Predicate<Connection> reported;

    /** Reports on every connected proxy. */
    SyncStatusGenerator(Supplier<Collection<Connection>> connections) {
        this(connections, c -> true);
    }

    private SyncStatusGenerator(Supplier<Collection<Connection>> connections, Predicate<Connection> reported) {
        this.connections = connections;
        this.reported = reported;
    }

    /** Reports only on the proxies of {@code namespace} (what a workload namespace may see). */
    SyncStatusGenerator ofNamespace(String namespace) {
        return new SyncStatusGenerator(connections, c -> c.proxy().namespace().equals(namespace));
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        List<Any> out = new ArrayList<>();
        for (Connection c : connections.get()) {
            if (DEBUG_CLIENT_GENERATOR.equals(c.proxy().generator()) || !reported.test(c)) {
                continue;
            }
            Struct.Builder metadata = Struct.newBuilder();
            putIfSet(metadata, "CLUSTER_ID", c.proxy().clusterId());
            putIfSet(metadata, "NAMESPACE", c.proxy().namespace());
            putIfSet(metadata, "ISTIO_VERSION", c.proxy().istioVersion());
            ClientConfig.Builder config = ClientConfig.newBuilder()
                    .setNode(Node.newBuilder().setId(c.proxy().id()).setMetadata(metadata));
            new TreeMap<>(c.watches()).forEach((type, w) -> config.addGenericXdsConfigs(typeState(type, w)));
            out.add(Any.pack(config.build()));
        }
        return out;
    }

    private static ClientConfig.GenericXdsConfig typeState(String type, Connection.Watch w) {
        var state = ClientConfig.GenericXdsConfig.newBuilder().setTypeUrl(type).setConfigStatus(status(w));
        Instant sent = w.lastSent();
        if (sent != null) {
            state.setLastUpdated(timestamp(sent));
        }
        if (!w.nackError().isEmpty()) {
            var failure = UpdateFailureState.newBuilder().setDetails(w.nackError());
            if (sent != null) {
                failure.setLastUpdateAttempt(timestamp(sent));
            }
            state.setErrorState(failure);
        }
        return state.build();
    }

    /** istiod's debugSyncStatus: a NACK not yet followed by an ACK is an error, whatever was sent since. */
    static ConfigStatus status(Connection.Watch w) {
        if (w == null) {
            return ConfigStatus.NOT_SENT;
        }
        if (!w.nackError().isEmpty()) {
            return ConfigStatus.ERROR;
        }
        if (w.nonceSent().isEmpty()) {
            return ConfigStatus.NOT_SENT;
        }
        return w.synced() ? ConfigStatus.SYNCED : ConfigStatus.STALE;
    }

    private static void putIfSet(Struct.Builder metadata, String key, String value) {
        if (!value.isEmpty()) {
            metadata.putFields(key, Value.newBuilder().setStringValue(value).build());
        }
    }

    private static Timestamp timestamp(Instant t) {
        return Timestamp.newBuilder().setSeconds(t.getEpochSecond()).setNanos(t.getNano()).build();
    }
}
