package io.meshpilot.grpc;

import io.grpc.Context;

/**
 * The transport connection (TCP + HTTP/2) under a gRPC call, as far as a long-lived stream
 * needs it: how to write to one of its streams. grpc-java's Netty server serializes writes on
 * its event loop, so its calls carry {@link #DIRECT}; Helidon's calls carry a per-connection
 * lock ({@link HelidonConnections}).
 */
public interface TransportConnection {
    /** Writes run on the caller's thread as they come: the transport serializes them itself. */
    TransportConnection DIRECT = new TransportConnection() {
        @Override
        public boolean limitsConnectionAge() {
            return true;
        }
    };

    Context.Key<TransportConnection> KEY = Context.key("meshpilot.transport-connection");

    /**
     * Runs a write to one of the connection's streams. Helidon's HTTP/2 writer checks and
     * debits the connection's flow-control window in separate steps, so writes from several
     * threads to streams of one connection can overrun the window (the client then ends the
     * connection with FLOW_CONTROL_ERROR; seen under load with 100 streams per connection);
     * its connections run writes one at a time.
     */
    default void write(Runnable write) {
        write.run();
    }

    /**
     * Whether the transport ends connections at --keepaliveMaxServerConnectionAge itself
     * (grpc-java's Netty server does; Helidon's has no such limit, so the xDS server ends the
     * streams of its connections).
     */
    default boolean limitsConnectionAge() {
        return false;
    }

    /** The connection of the call running on this thread. */
    static TransportConnection current() {
        TransportConnection c = KEY.get();
        return c == null ? DIRECT : c;
    }
}
