package io.meshpilot.grpc;

import io.grpc.Context;

/**
 * The transport connection (TCP + HTTP/2) under a gRPC call, as far as a long-lived stream
 * needs it: is it still open, and close it. grpc-java's Netty server watches its connections
 * itself (keepalive pings, cancellation on reset), so its calls carry {@link #UNWATCHED}.
 * Helidon's server neither pings nor tells a call that its connection died, so its calls
 * carry {@link HelidonConnections}' view of the socket, and the xDS server sweeps for closed
 * ones.
 */
public interface TransportConnection {
    /** A connection the transport watches itself: always reported open, never aborted here. */
    TransportConnection UNWATCHED = new TransportConnection() {
        @Override
        public boolean open() {
            return true;
        }

        @Override
        public void abort() {
        }
    };

    Context.Key<TransportConnection> KEY = Context.key("meshpilot.transport-connection");

    /** False once the connection is closed (the peer went away or was aborted). */
    boolean open();

    /** Closes the connection at once; its calls end. */
    void abort();

    /**
     * Runs a write to one of the connection's streams. Helidon's HTTP/2 writer checks and
     * debits the connection's flow-control window in separate steps, so writes from several
     * threads to streams of one connection can overrun the window (the client then ends the
     * connection with FLOW_CONTROL_ERROR; seen under load with 100 streams per connection);
     * its connections run writes one at a time. Netty serializes on its event loop itself.
     */
    default void write(Runnable write) {
        write.run();
    }

    /** The connection of the call running on this thread. */
    static TransportConnection current() {
        TransportConnection c = KEY.get();
        return c == null ? UNWATCHED : c;
    }
}
