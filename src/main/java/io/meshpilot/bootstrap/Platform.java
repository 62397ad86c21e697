package io.meshpilot.bootstrap;

import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.kube.gateway.GatewayApiController;
import io.meshpilot.config.kube.ingress.IngressController;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.RevisionTags;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.xds.DiscoveryServer;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * What differs between the two ways MeshPilot runs: embedded (files on disk) or on
 * Kubernetes (everything that needs a client). Chosen once, by {@link #connect}; the init
 * steps ask it instead of testing for a client.
 */
sealed interface Platform permits EmbeddedPlatform, KubernetesPlatform {

    /** istiod's initKubeClient: a client when --kubeconfig or the cluster names one, else embedded. */
    static Built<Platform> connect(PilotArgs args, List<AutoCloseable> closeables) {
        if (args.kube() == null) {
            return new Built<>(new EmbeddedPlatform(args), "none (embedded mode)");
        }
        KubeClient client;
        try {
            client = KubeClient.create(args.kube());
        } catch (IOException e) {
            throw new ComponentStartException(Component.KUBE_CLIENT, e.getMessage(), e);
        }
        closeables.add(client);
        // one tag watcher for the injector and the Gateway API status (istiod's tag watchers)
        RevisionTags tags = RevisionTags.watch(client);
        closeables.add(tags);
        return new Built<>(new KubernetesPlatform(args, client, tags), "apiServer=" + client.describe());
    }

    /** The Kubernetes client; null in embedded mode. */
    KubeClient client();

    /** How long the start functions wait for the config stores (and informers) to sync. */
    Duration syncTimeout();

    /** The cluster's istio ConfigMap as the mesh config source (not yet started); null when there is none. */
    MeshConfigMapWatcher meshConfigMap(Environment environment);

    /** Where the self-signed root is kept. */
    CaRootStore caRootStore();

    /** Who may sign for whom, and (EXTERNAL_CA) the Kubernetes RA signing workloads; before the CA starts. */
    void configureCa(IstiodCertificates certificates, CaSetup setup, Environment environment);

    /** Authenticators after the CA's own; returns what to add to the CA's log line. */
    String addAuthenticators(Authenticators authenticators, Environment environment);

    /**
     * The gateway credentials SDS serves (istiod's credentials controller): the
     * {@code --credentialsDir} Secret manifests, or in Kubernetes mode the cluster's Secrets with
     * RBAC. Returns what to add to the config stores' log line.
     */
    String watchCredentials(CredentialsController credentials, List<AutoCloseable> closeables);

    /**
     * istiod's ingress controller, when it serves Kubernetes Ingresses (with the mesh handler
     * that converts them again registered); empty when there are none to serve.
     */
    Optional<IngressController> ingressController(Environment environment);

    /**
     * istiod's Gateway API controller (PILOT_ENABLE_GATEWAY_API), whose informers start with the
     * client's; empty without a cluster or with the switch off.
     */
    Optional<GatewayApiController> gatewayApiController();

    /** The config stores and registries see the namespaces the mesh config selects. */
    void watchDiscoverySelectors(Environment environment);

    /** The injector's settings: the istio-sidecar-injector ConfigMap, watched, or the chart's defaults. */
    Supplier<SidecarInjector.Settings> injectorSettings();

    /** A namespace's labels, null when unknown. */
    Function<String, Map<String, String>> namespaceLabels();

    /**
     * The revision an {@code istio.io/rev} value stands for: revision tags followed, or the value
     * itself. The same resolver on every call (one watcher, closed with the server).
     */
    UnaryOperator<String> revisionTags(List<AutoCloseable> closeables);

    /**
     * istiod's multicluster secret controller when the registries take remote clusters (their
     * services, and their Secrets for their gateways' credentials); else null.
     */
    RemoteSecretController watchRemoteClusters(ServiceRegistries registries, CredentialsController credentials,
                                               List<AutoCloseable> closeables);

    /** The controllers that write to the cluster, built now, with the start functions that run them. */
    Built<StartPhases> controllers(IstiodCertificates certificates, ConfigController configs, DiscoveryServer discovery,
                                   ServiceRegistries registries, RemoteSecretController remoteSecrets,
                                   List<AutoCloseable> closeables);

    /**
     * A platform's part of {@link PilotServer#start()}: its readiness probes, and its start
     * functions before the config stores sync, after they have, and after the first push.
     */
    record StartPhases(Consumer<Readiness> probes, List<StartFunction> beforeConfigSync,
                       List<StartFunction> afterConfigSync, List<StartFunction> afterFirstPush) {
        static final StartPhases NONE = new StartPhases(r -> { }, List.of(), List.of(), List.of());
    }
}
