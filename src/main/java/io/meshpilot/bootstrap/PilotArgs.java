package io.meshpilot.bootstrap;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Everything pilot-discovery was started with: flags, env overrides and derived values,
 * validated once. Immutable; the first component of the start-up order.
 *
 * <p>{@code configStateDir} (--configStateDir) is where the writable store keeps the objects
 * written over REST when embedded.
 *
 * <p>Listener addresses are null when the flag was set to the empty string: istiod then
 * serves that listener's content on the http port instead.
 */
public record PilotArgs(
        ServerMode mode,
        String modeReason,
        List<String> registries,
        String kubeconfig,
        Path configDir,
        Path configStateDir,
        Path credentialsDir,
        Path meshConfigFile,
        Path networksConfigFile,
        String namespace,
        String domainSuffix,
        String clusterId,
        Listeners listeners,
        Keepalive keepalive,
        Duration shutdownDuration,
        GrpcTransportKind grpcTransport,
        PilotFeatures features,
        Ca ca,
        List<String> ignoredArguments) {

    public PilotArgs {
        registries = List.copyOf(registries);
        ignoredArguments = List.copyOf(ignoredArguments);
    }

    /**
     * Where the self-signed CA keeps its root without Kubernetes, and its key type.
     *
     * @param stateDir --caStateDir: the root certificate and key, created once and reused
     * @param ecdsa    --caKeyType EC: an ECDSA P-256 root instead of istiod's RSA default
     */
    public record Ca(Path stateDir, boolean ecdsa) {
    }

    /**
     * The five listeners of DESIGN section 2.
     *
     * @param http       --httpAddr (readiness, debug, admin API)
     * @param grpc       --grpcAddr (plaintext xDS)
     * @param secureGrpc --secureGRPCAddr (TLS xDS + CA)
     * @param monitoring --monitoringAddr (metrics, version, debug)
     * @param https      --httpsAddr (webhooks)
     */
    public record Listeners(ListenAddress http, ListenAddress grpc, ListenAddress secureGrpc,
                            ListenAddress monitoring, ListenAddress https) {
        public Listeners {
            if (http == null) {
                throw new IllegalArgumentException("--httpAddr must not be empty");
            }
        }

        /** The listeners by the names used in logs, metrics and /api/v1/server. */
        public Map<String, ListenAddress> byName() {
            var m = new java.util.LinkedHashMap<String, ListenAddress>();
            m.put(ListenerNames.HTTP, http);
            m.put(ListenerNames.GRPC, grpc);
            m.put(ListenerNames.GRPC_SECURE, secureGrpc);
            m.put(ListenerNames.MONITORING, monitoring);
            m.put(ListenerNames.WEBHOOK, https);
            return java.util.Collections.unmodifiableMap(m);
        }
    }

    /** gRPC keepalive as istiod's --keepalive* flags. */
    public record Keepalive(Duration interval, Duration timeout, Duration maxServerConnectionAge) {
    }
}
