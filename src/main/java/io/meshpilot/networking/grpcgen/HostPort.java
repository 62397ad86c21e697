package io.meshpilot.networking.grpcgen;

import io.meshpilot.model.PushContext;

/**
 * The {@code host:port} a proxyless gRPC client names in its target ({@code xds:///reviews:9080});
 * short hosts resolve in the client's namespace, as istiod's gRPC generator does.
 */
record HostPort(String host, int port) {
    static HostPort parse(String name, String namespace, String domainSuffix) {
        int colon = name.lastIndexOf(':');
        if (colon <= 0) {
            return null;
        }
        try {
            int port = Integer.parseInt(name.substring(colon + 1));
            return new HostPort(PushContext.resolve(name.substring(0, colon), namespace, domainSuffix), port);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
