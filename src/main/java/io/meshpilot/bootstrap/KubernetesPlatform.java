package io.meshpilot.bootstrap;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.kube.gateway.GatewayApiController;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiRevision;
import io.meshpilot.config.kube.gateway.convert.GatewayApiConversion;
import io.meshpilot.config.kube.ingress.IngressController;
import io.meshpilot.inject.InjectorConfigMapWatcher;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.PodInformer;
import io.meshpilot.kube.RevisionTags;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.mesh.MeshConfigMapWatcher;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.registry.kube.DiscoverySelectors;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.SignerServing;
import io.meshpilot.security.ca.BoundedBackoff;
import io.meshpilot.security.ca.CaRootStore;
import io.meshpilot.security.ca.KubeSecretCaRootStore;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.credentials.KubeConfigMapCaCertificates;
import io.meshpilot.security.credentials.KubeSecretCredentials;
import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.istiod.IstiodCertificates;
import io.meshpilot.security.kube.KubeJwtAuthenticator;
import io.meshpilot.security.kube.NodeAuthorizer;
import io.meshpilot.security.kube.SecretAccessReviews;
import io.meshpilot.security.ra.KubernetesRa;
import io.meshpilot.security.ra.SignerRoots;
import io.meshpilot.xds.DiscoveryServer;
import java.lang.System.Logger.Level;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * Kubernetes mode: everything that needs the client. The mesh ConfigMap, the CA root in
 * istiod's Secrets, node authorization, the RA and TokenReview, discovery selectors, the
 * injector's ConfigMap, remote clusters, and (through {@link KubeControllers}) the
 * controllers that write to the cluster.
 */
record KubernetesPlatform(PilotArgs args, KubeClient client, RevisionTags tags) implements Platform {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    @Override
    public Duration syncTimeout() {
        return args.kube().syncTimeout();
    }

    @Override
    public MeshConfigMapWatcher meshConfigMap(Environment environment) {
        // istiod: a mesh config file wins; without one, the cluster's istio ConfigMap
        return new MeshConfigMapWatcher(environment, client, args.namespace(), args.revision());
    }

    @Override
    public CaRootStore caRootStore() {
        // in a cluster the root is shared by the replicas through istiod's Secrets, and only there
        return new KubeSecretCaRootStore(client, args.namespace(),
                BoundedBackoff.istiod(args.features().ca().secretTimeout()));
    }

    @Override
    public void configureCa(IstiodCertificates certificates, CaSetup setup, Environment environment) {
        var f = args.features();
        if (!f.kubeAuth().trustedNodeAccounts().isEmpty()) {
            certificates.impersonationPolicy(new NodeAuthorizer(PodInformer.of(client), f.kubeAuth().trustedNodeAccounts()));
        }
        if (!f.ra().kubernetesApi()) {
            CaInit.refuseServingSignerWithoutRa(f);
            return;
        }
        SignerRoots signerRoots = new SignerRoots(environment::mesh, List.of(SignerRoots.EXTERNAL_CA_ROOT,
                serviceAccountCa()));
        try {
            certificates.signWorkloadsWith(new KubernetesRa(client.apiClient(), f.ra().k8sSigner(), setup::ca,
                    signerRoots, f.ra().signTimeout()));
        } catch (IllegalArgumentException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        // istiod's initDNSCertsK8SRA: its own certificate from the named signer too
        f.ra().servingSigner().ifPresent(signer -> certificates.serveFrom(new SignerServing(signer,
                new KubernetesRa(client.apiClient(), signer, setup::ca, signerRoots, f.ra().signTimeout()),
                signerRoots)));
    }

    /** The cluster CA of the service account this server connects with (MESHPILOT_SERVICE_ACCOUNT_DIR moves it). */
    private Path serviceAccountCa() {
        return args.kube().inCluster() != null ? args.kube().inCluster().caFile() : SignerRoots.SERVICE_ACCOUNT_CA;
    }

    @Override
    public String addAuthenticators(Authenticators authenticators, Environment environment) {
        // istiod's initAuthenticators: after the client-certificate and JWT_RULE ones, for
        // CreateCertificate and (XDS_AUTH) the xDS streams of the secure port alike
        var kubeAuth = args.features().kubeAuth();
        authenticators.register(new KubeJwtAuthenticator(client.apiClient(), kubeAuth.jwtPolicy(),
                args.clusterId(), () -> environment.mesh().getTrustDomain(), KubeJwtAuthenticator.CACHE_TTL));
        return "; Kubernetes TokenReview authenticator JWT_POLICY=" + kubeAuth.jwtPolicy().envValue()
                + (kubeAuth.trustedNodeAccounts().isEmpty() ? ""
                        : " CA_TRUSTED_NODE_ACCOUNTS=" + kubeAuth.trustedNodeAccounts().accounts());
    }

    @Override
    public String watchCredentials(CredentialsController credentials, List<AutoCloseable> closeables) {
        if (args.credentialsDir() != null) {
            LOG.log(Level.WARNING, "--credentialsDir " + args.credentialsDir() + " is not read in Kubernetes mode: "
                    + "gateway credentials are the cluster's Secrets, as istiod serves them");
        }
        // istiod's credentials controller of the config cluster: Secrets by informer, RBAC by SubjectAccessReview
        KubeSecretCredentials secrets = new KubeSecretCredentials(client, args.clusterId());
        closeables.add(secrets);
        credentials.useKubernetes(args.clusterId(), secrets, new SecretAccessReviews(client.apiClient()));
        KubeConfigMapCaCertificates configMaps = new KubeConfigMapCaCertificates(client);
        closeables.add(configMaps);
        credentials.useConfigMaps(configMaps);
        return "; gateway credentials from the cluster's Secrets, configmap:// CAs from its ConfigMaps";
    }

    /**
     * istiod serves Kubernetes Ingresses when it watches the cluster's services (the Kubernetes
     * registry) and the mesh config's ingressControllerMode at start is not OFF.
     */
    @Override
    public Optional<IngressController> ingressController(Environment environment) {
        if (!args.registries().contains("Kubernetes")
                || environment.mesh().getIngressControllerMode() == MeshConfig.IngressControllerMode.OFF) {
            return Optional.empty();
        }
        IngressController ingress = new IngressController(client, environment::mesh,
                args.features().ingressNamespace(), args.domainSuffix());
        environment.addMeshHandler(ingress::meshChanged);
        return Optional.of(ingress);
    }

    /**
     * istiod's Gateway API controller, in Kubernetes mode with PILOT_ENABLE_GATEWAY_API; whose
     * statuses this revision writes follows the revision tags and the default revision.
     */
    @Override
    public Optional<GatewayApiController> gatewayApiController() {
        var g = args.features().gatewayApi();
        if (!g.enabled()) {
            return Optional.empty();
        }
        return Optional.of(new GatewayApiController(client, new GatewayApiRevision(args.revision(), tags, tags::defaultRevision),
                new GatewayApiInputs.Settings(args.domainSuffix(), args.clusterId(), g.controllerName(),
                        g.defaultGatewayClass(), g.manualDeployment(), g.multiNetwork(), g.alphaApis(),
                        g.inferenceExtension(), false, "multicluster.x-k8s.io", args.features().ambient().waypoints()),
                GatewayApiConversion::convert));
    }

    /**
     * istiod's discovery namespaces filter on the kube client: its selectors follow the mesh
     * config (file or ConfigMap), and every reader of the client sees the same selection.
     */
    @Override
    public void watchDiscoverySelectors(Environment environment) {
        var filter = client.discoveryNamespaces();
        filter.setSelectors(DiscoverySelectors.of(environment.mesh()));
        environment.addMeshHandler(() -> filter.setSelectors(DiscoverySelectors.of(environment.mesh())));
    }

    @Override
    public Supplier<SidecarInjector.Settings> injectorSettings() {
        var watcher = new InjectorConfigMapWatcher(client, args.namespace(), args.revision());
        LOG.log(Level.INFO, "sidecar injector: " + watcher.start());
        return watcher;
    }

    @Override
    public UnaryOperator<String> revisionTags(List<AutoCloseable> closeables) {
        return tags;
    }

    @Override
    public Function<String, Map<String, String>> namespaceLabels() {
        var namespaces = client.discoveryNamespaces().informer().getIndexer();
        return ns -> {
            var n = namespaces.getByKey(ns);
            return n == null || n.getMetadata() == null ? null
                    : n.getMetadata().getLabels() == null ? Map.of() : n.getMetadata().getLabels();
        };
    }

    @Override
    public RemoteSecretController watchRemoteClusters(ServiceRegistries registries, CredentialsController credentials,
                                                      List<AutoCloseable> closeables) {
        if (registries.remoteClusters() == null) {
            return null;
        }
        // istiod's multicluster secret controller: remote clusters join (and leave) the aggregate
        // as their Secrets come and go, and so do their Secrets for their gateways; its informer
        // starts with the local client's
        var remoteSecrets = new RemoteSecretController(client, new RemoteSecretController.Options(
                args.clusterRegistriesNamespace(), args.clusterId(), args.kube().qps(), args.kube().burst()),
                RemoteSecretController.ClusterHandler.all(registries.remoteClusters(), new RemoteCredentials(credentials)));
        closeables.add(remoteSecrets); // before the registries stop: no cluster arrives at a stopped aggregate
        return remoteSecrets;
    }

    @Override
    public Built<StartPhases> controllers(IstiodCertificates certificates, ConfigController configs,
                                          DiscoveryServer discovery, ServiceRegistries registries,
                                          RemoteSecretController remoteSecrets, List<AutoCloseable> closeables) {
        var controllers = new KubeControllers(args, client, certificates, configs, discovery, registries, remoteSecrets,
                tags);
        return new Built<>(controllers.startPhases(closeables), controllers.describe());
    }
}
