package io.meshpilot.bootstrap;

/** Which server hosts our grpc-java services on the gRPC ports (--grpcTransport). */
public enum GrpcTransportKind {
    /** Helidon's own gRPC server on Helidon sockets (the default). */
    HELIDON,
    /** grpc-java's Netty server, bound by us on the same addresses. */
    NETTY
}
