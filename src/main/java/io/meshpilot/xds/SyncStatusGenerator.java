package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.status.v3.ClientConfig;
import io.envoyproxy.envoy.service.status.v3.ConfigStatus;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * istiod's xDS debug type {@code istio.io/debug/syncz} (what {@code istioctl proxy-status}
 * asks over ADS): one {@code envoy.service.status.v3.ClientConfig} per connected proxy, with
 * per type whether the last response was ACKed (SYNCED), is awaiting its ACK (STALE), was
 * NACKed (ERROR) or was never sent (NOT_SENT).
 */
final class SyncStatusGenerator implements Generator {
    private static final List<String> TYPES = List.of(TypeUrls.CLUSTER, TypeUrls.LISTENER, TypeUrls.ROUTE,
            TypeUrls.ENDPOINT);
    private final Supplier<Collection<Connection>> connections;
    private final Predicate<Connection> reported;

    /** Reports on every connection. */
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
            if (!reported.test(c)) {
                continue;
            }
            Struct.Builder metadata = Struct.newBuilder()
                    .putFields("ISTIO_VERSION", Value.newBuilder().setStringValue(c.proxy().istioVersion()).build())
                    .putFields("NAMESPACE", Value.newBuilder().setStringValue(c.proxy().namespace()).build());
            ClientConfig.Builder config = ClientConfig.newBuilder()
                    .setNode(Node.newBuilder().setId(c.proxy().id()).setMetadata(metadata));
            var watches = c.watches();
            for (String type : TYPES) {
                Connection.Watch w = watches.get(type);
                config.addGenericXdsConfigs(ClientConfig.GenericXdsConfig.newBuilder()
                        .setTypeUrl(type)
                        .setVersionInfo(w == null ? "" : w.versionSent())
                        .setConfigStatus(status(w)));
            }
            out.add(Any.pack(config.build()));
        }
        return out;
    }

    static ConfigStatus status(Connection.Watch w) {
        if (w == null || w.nonceSent().isEmpty()) {
            return ConfigStatus.NOT_SENT;
        }
        if (!w.nackError().isEmpty() && w.nackVersion().equals(w.versionSent())) {
            return ConfigStatus.ERROR;
        }
        return w.synced() ? ConfigStatus.SYNCED : ConfigStatus.STALE;
    }
}
