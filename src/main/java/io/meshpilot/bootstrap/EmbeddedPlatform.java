package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.kube.gateway.GatewayApiController;
import io.meshpilot.config.kube.ingress.IngressController;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.xds.DiscoveryServer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/** Embedded mode: config, mesh config and the CA root on disk; nothing to watch or write in a cluster. */
record EmbeddedPlatform(PilotArgs args) implements Platform {

    @Override
    public KubeClient client() {
        return null;
    }

    /** Files are read at once: nothing to wait for. */
    @Override
    public Duration syncTimeout() {
        return Duration.ZERO;
    }

    @Override
    public MeshConfigMapWatcher meshConfigMap(Environment environment) {
        return null;
    }

    @Override
    public CaRootStore caRootStore() {
        return CaRootStore.directory(args.ca().stateDir());
    }

    @Override
    public void configureCa(IstiodCertificates certificates, CaSetup setup, Environment environment) {
        var ra = args.features().ra();
        if (ra.kubernetesApi()) {
            throw new ComponentStartException(Component.CA, "EXTERNAL_CA=" + ra.externalCa()
                    + " needs Kubernetes mode (--kubeconfig, or in a cluster)", null);
        }
        CaInit.refuseServingSignerWithoutRa(args.features());
    }

    @Override
    public String addAuthenticators(Authenticators authenticators, Environment environment) {
        return "";
    }

    @Override
    public Optional<IngressController> ingressController(Environment environment) {
        return Optional.empty(); // no cluster, no Ingresses
    }

    @Override
    public Optional<GatewayApiController> gatewayApiController() {
        return Optional.empty(); // no cluster, no Gateway API objects
    }

    @Override
    public void watchDiscoverySelectors(Environment environment) {
        // every namespace is selected: there are no namespaces to select from
    }

    @Override
    public Supplier<SidecarInjector.Settings> injectorSettings() {
        return SidecarInjector.Settings::defaults;
    }

    @Override
    public Function<String, Map<String, String>> namespaceLabels() {
        return ns -> null;
    }

    @Override
    public String watchCredentials(CredentialsController credentials, List<AutoCloseable> closeables) {
        credentials.start(args.credentialsDir());
        return "";
    }

    @Override
    public UnaryOperator<String> revisionTags(List<AutoCloseable> closeables) {
        return UnaryOperator.identity(); // no webhook configurations, so no tags
    }

    @Override
    public RemoteSecretController watchRemoteClusters(ServiceRegistries registries, CredentialsController credentials,
                                                      List<AutoCloseable> closeables) {
        return null;
    }

    @Override
    public Built<StartPhases> controllers(IstiodCertificates certificates, ConfigController configs,
                                          DiscoveryServer discovery, ServiceRegistries registries,
                                          RemoteSecretController remoteSecrets, List<AutoCloseable> closeables) {
        return new Built<>(StartPhases.NONE, "none (embedded mode)");
    }
}
