package io.meshpilot.grpc;

import java.net.SocketAddress;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One write lock per Helidon HTTP/2 connection while it has calls (see
 * {@link TransportConnection#write}). Helidon exposes no connection object to a gRPC call, so
 * a connection is known by its client's address (one TCP connection per address and port at
 * a time); the entry goes when the connection's last call ends.
 */
final class HelidonConnections {
    private static final ConcurrentHashMap<SocketAddress, Entry> CONNECTIONS = new ConcurrentHashMap<>();

    private record Entry(TransportConnection connection, int calls) {
    }

    private HelidonConnections() {
    }

    /** The connection of a call from {@code remote} that is starting; {@link #ended} must follow. */
    static TransportConnection started(SocketAddress remote) {
        return CONNECTIONS.compute(remote, (a, e) -> e == null
                ? new Entry(locked(), 1) : new Entry(e.connection(), e.calls() + 1)).connection();
    }

    /** A call from {@code remote} ended (closed by us or cancelled by the client). */
    static void ended(SocketAddress remote) {
        CONNECTIONS.computeIfPresent(remote, (a, e) -> e.calls() <= 1 ? null : new Entry(e.connection(), e.calls() - 1));
    }

    /** Connections with calls in progress. */
    static int tracked() {
        return CONNECTIONS.size();
    }

    private static TransportConnection locked() {
        Object lock = new Object();
        return new TransportConnection() {
            @Override
            public void write(Runnable write) {
                synchronized (lock) {
                    write.run();
                }
            }
        };
    }
}
