package io.meshpilot.features;

/** Which server hosts our grpc-java services on the gRPC ports (--grpcTransport). */
public enum GrpcTransportKind {
    /** Helidon's own gRPC server on Helidon sockets (limits in the README). */
    HELIDON,
    /** grpc-java's Netty server, bound by us (the default). */
    NETTY
}
