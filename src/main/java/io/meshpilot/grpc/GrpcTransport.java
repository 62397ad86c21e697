package io.meshpilot.grpc;

import java.util.Map;

/**
 * Hosts {@link GrpcServices} on the plaintext and secure gRPC listeners. Two
 * implementations serve the same services with the same TLS material: grpc-java's Netty
 * server (default) and Helidon's gRPC server ({@code --grpcTransport=helidon}).
 */
public interface GrpcTransport {
    /** Hands the services to the server(s); called just before Helidon binds its sockets. */
    void prepare();

    /** After all listeners are bound: listener name to bound port. */
    Map<String, Integer> boundPorts();

    /** Stops accepting connections and closes the remaining calls. */
    void stop();
}
