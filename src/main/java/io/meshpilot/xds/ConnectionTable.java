package io.meshpilot.xds;

import io.meshpilot.monitoring.IstioCounter;
import java.lang.System.Logger.Level;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The ADS streams of one DiscoveryServer (istiod's adsClients), with the per-node reject
 * series that live as long as a node has a stream.
 */
final class ConnectionTable {
    private static final System.Logger LOG = System.getLogger(ConnectionTable.class.getName());
    /** istiod's pilot_xds{version}: connected streams by the proxy's ISTIO_VERSION ("" when it sends none). */
    static final IstioCounter XDS_CLIENTS = IstioCounter.upDown("pilot_xds", "version",
            "Number of endpoints connected to this pilot using XDS.");

    private final Map<String, Connection> connections = new ConcurrentHashMap<>();
    /** Node ids with pilot_xds_*_reject series, removed when the node's last stream ends. */
    private final Set<String> rejectingNodes = ConcurrentHashMap.newKeySet();
    /** Counts connects and disconnects: what live checks depend on besides the push. */
    private final AtomicLong changes = new AtomicLong();

    Collection<Connection> all() {
        return List.copyOf(connections.values());
    }

    int size() {
        return connections.size();
    }

    /**
     * The connection a debug request's {@code proxyID} names: as istiod, the first whose
     * connection id contains it (a pod's {@code name.namespace} is enough), in connection-id order.
     */
    Optional<Connection> debugConnection(String proxyId) {
        return connections.values().stream().sorted(Comparator.comparing(Connection::id))
                .filter(c -> c.id().contains(proxyId)).findFirst();
    }

    long changes() {
        return changes.get();
    }

    boolean isConnected(Connection c) {
        return connections.containsKey(c.id());
    }

    void connected(Connection c) {
        c.onSendFailure(e -> {
            if (e instanceof Outbox.SendTimeout timeout) {
                LOG.log(Level.WARNING, "xDS send timed out, disconnecting proxy=" + c.proxy().id() + " connection="
                        + c.id() + ": " + e.getMessage());
                disconnected(c);
                c.end(timeout.status());
                return;
            }
            // a write failed: the stream is gone (cancelled, reset, or Helidon's flow-control
            // timeout on a reader that stopped reading)
            LOG.log(Level.INFO, "xDS stream gone, dropping proxy=" + c.proxy().id() + " connection=" + c.id()
                    + ": " + e.getMessage());
            disconnected(c);
        });
        if (connections.put(c.id(), c) == null) {
            XDS_CLIENTS.add(c.proxy().istioVersion(), 1);
        }
        changes.incrementAndGet();
        LOG.log(Level.INFO, "xDS connected proxy=" + c.proxy().id() + " connection=" + c.id() + " peer=" + c.peer()
                + " generator=" + (c.proxy().proxyless() ? "grpc" : "envoy")
                + (c.identities().isEmpty() ? "" : " identities=" + c.identities()));
    }

    void disconnected(Connection c) {
        if (connections.remove(c.id()) != null) {
            XDS_CLIENTS.add(c.proxy().istioVersion(), -1);
            changes.incrementAndGet();
            LOG.log(Level.INFO, "xDS disconnected proxy=" + c.proxy().id() + " connection=" + c.id());
            dropRejectsIfGone(c.proxy().id());
        }
    }

    /** pilot_xds_{type}_reject{node,err}: one series per NACKing proxy and code, while it is connected (as istiod). */
    void rejected(Connection con, String metricType, int code) {
        rejectingNodes.add(con.proxy().id());
        XdsMetrics.rejects(metricType).increment(con.proxy().id(), XdsMetrics.rejectCode(code));
        if (!isConnected(con)) { // the stream ended while its NACK was counted
            dropRejectsIfGone(con.proxy().id());
        }
    }

    /** The node id is the client's choice: its reject series go with its last stream. */
    private void dropRejectsIfGone(String node) {
        if (rejectingNodes.contains(node) && connections.values().stream().noneMatch(o -> o.proxy().id().equals(node))) {
            rejectingNodes.remove(node);
            XdsMetrics.removeRejects(node);
        }
    }

    void closeAll() {
        connections.values().forEach(Connection::close);
    }
}
