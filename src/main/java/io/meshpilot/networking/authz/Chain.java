package io.meshpilot.networking.authz;

/**
 * Where the RBAC config is enforced: an Envoy HTTP connection manager, an Envoy TCP chain
 * (no request attributes), or a proxyless gRPC server, whose RBAC (gRFC A41) refuses a
 * config with a URI template or a {@code grpc-}/{@code :scheme} header matcher.
 */
enum Chain {
    HTTP, TCP, GRPC
}
