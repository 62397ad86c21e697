package io.meshpilot.networking.telemetry;

import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import java.util.Optional;

/**
 * istiod's LookupCluster: the outbound cluster of an extension provider's {@code service}
 * ({@code <host>} or {@code <namespace>/<host>}) and port, or empty when the registry has no
 * such service (istiod then leaves the provider out and counts a lookup failure).
 *
 * @param hostname the service's host (the authority of gRPC calls, the Host of HTTP ones)
 * @param cluster  {@code outbound|<port>||<host>}
 */
public record ProviderClusters(String hostname, String cluster) {
    static Optional<ProviderClusters> lookup(PushContext push, String service, int port) {
        if (service.isEmpty()) {
            return Optional.empty();
        }
        int slash = service.indexOf('/');
        String namespace = slash >= 0 ? service.substring(0, slash) : null;
        String host = slash >= 0 ? service.substring(slash + 1) : service;
        Optional<Service> svc = push.service(host);
        if (svc.isEmpty() || namespace != null && !svc.get().namespace().equals(namespace)) {
            return Optional.empty();
        }
        return Optional.of(new ProviderClusters(svc.get().hostname(),
                "outbound|" + port + "||" + svc.get().hostname()));
    }
}
