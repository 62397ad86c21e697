package io.meshpilot.bootstrap;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.Keepalive;
import io.meshpilot.features.Listeners;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.features.ServerMode;
import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.kube.KubeClientOptions;
import java.util.Map;

/**
 * Everything pilot-discovery was started with: flags, env overrides and derived values,
 * validated once. Immutable; the first component of the start-up order.
 *
 * <p>{@code configStateDir} (--configStateDir) is where the writable store keeps the objects
 * written over REST when embedded.
 *
 * <p>{@code kube} is how to reach the API server in Kubernetes mode (--kubeconfig, else
 * $KUBECONFIG, else in-cluster; --kubernetesApiQPS, --kubernetesApiBurst); null when embedded.
 *
 * <p>{@code revision} ($REVISION, istiod's control-plane revision; empty for the default one)
 * names the mesh ConfigMap read in Kubernetes mode: {@code istio-<revision>}.
 *
 * <p>{@code clusterRegistriesNamespace} (--clusterRegistriesNamespace, istiod's default
 * $POD_NAMESPACE or istio-system) is where the remote Secrets of other clusters are read;
 * {@code clusterAliases} (--clusterAliases alias=id,...) maps the CLUSTER_ID a proxy reports to
 * the cluster ID MeshPilot knows it by.
 *
 * <p>{@code tls} holds istiod's TLS flags: its certificate from files (--caCertFile, --tlsCertFile,
 * --tlsKeyFile) and the secure gRPC port's --tls-min-version and --tls-cipher-suites.
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
        List<String> ignoredArguments,
        KubeClientOptions kube,
        String revision,
        String clusterRegistriesNamespace,
        Map<String, String> clusterAliases,
        ServerTlsOptions tls) {

    public PilotArgs {
        registries = List.copyOf(registries);
        ignoredArguments = List.copyOf(ignoredArguments);
        clusterAliases = Map.copyOf(clusterAliases);
    }

    /** The gRPC transport as the start-up log and {@code /api/v1/server} name it. */
    public String grpcTransportLabel() {
        return grpcTransport.name().toLowerCase(Locale.ROOT);
    }

    /**
     * Where the self-signed CA keeps its root without Kubernetes, and its key type.
     *
     * @param stateDir --caStateDir: the root certificate and key, created once and reused
     * @param ecdsa    --caKeyType EC: an ECDSA P-256 root instead of istiod's RSA default
     */
    public record Ca(Path stateDir, boolean ecdsa) {
    }

}
