package io.meshpilot.lifecycle;

/**
 * What a server is, as reported by {@code /api/v1/server} and the start-up log.
 *
 * @param mode          embedded or kubernetes
 * @param modeReason    why that mode was chosen
 * @param namespace     -n / POD_NAMESPACE
 * @param clusterId     --clusterID
 * @param domainSuffix  --domain
 * @param grpcTransport netty or helidon
 */
public record ServerIdentity(String mode, String modeReason, String namespace, String clusterId, String domainSuffix,
                             String grpcTransport) {
}
