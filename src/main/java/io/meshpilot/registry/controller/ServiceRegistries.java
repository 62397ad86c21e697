package io.meshpilot.registry.controller;

import io.meshpilot.monitoring.IstioGauge;
import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.aggregate.AggregateRegistry;
import io.meshpilot.registry.ambient.AmbientIndexController;
import io.meshpilot.registry.ambient.WorkloadPolicySelection;
import io.meshpilot.registry.ambient.ZtunnelPolicies;
import io.meshpilot.registry.multicluster.RemoteClusterRegistries;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.store.ConfigStoreController;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.kube.KubeInformers;
import io.meshpilot.registry.kube.KubeServiceRegistry;
import io.meshpilot.registry.memory.MemoryRegistry;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Component 6, the service registries (istiod's initServiceControllers): the aggregate
 * registry over the ServiceEntry registry (always) and the registries --registries names.
 * Registries report changes to a {@link RegistryUpdates} (the DiscoveryServer, wired by
 * bootstrap); a registry this build cannot run fails start-up naming it, never silently.
 */
public final class ServiceRegistries {
    /** Kinds the ServiceEntry registry turns into service and endpoint updates itself. */
    public static final Set<String> REGISTRY_KINDS = Set.of("ServiceEntry", "WorkloadEntry", "WorkloadGroup");

    /** A registry named in --registries that cannot run. */
    public static final class UnsupportedRegistryException extends IllegalArgumentException {
        UnsupportedRegistryException(String message) {
            super(message);
        }
    }

    /**
     * @param registries      --registries after the mode dropped what it cannot use (Kubernetes, Mock)
     * @param clusterId       --clusterID: the cluster of this server's own registries
     * @param systemNamespace -n/--namespace: its {@code topology.istio.io/network} label is the default network
     * @param features        the registry switches of PilotFeatures
     * @param kubeClient      the Kubernetes client (bootstrap's initKubeClient); null without a cluster
     * @param ambient         PILOT_ENABLE_AMBIENT: the Kubernetes registry's informers also feed the ambient index
     */
    public record Options(List<String> registries, String clusterId, String systemNamespace,
                          PilotFeatures.Registry features, KubeClient kubeClient, PilotFeatures.Ambient ambient) {
        public Options {
            registries = List.copyOf(registries);
        }

        /** Without ambient mode. */
        public Options(List<String> registries, String clusterId, String systemNamespace,
                       PilotFeatures.Registry features, KubeClient kubeClient) {
            this(registries, clusterId, systemNamespace, features, kubeClient, PilotFeatures.Ambient.OFF);
        }

        /** Without Kubernetes, with istiod's registry defaults. */
        public Options(List<String> registries, String clusterId) {
            this(registries, clusterId, "istio-system", PilotFeatures.Registry.DEFAULTS, null, PilotFeatures.Ambient.OFF);
        }
    }

    private final AggregateRegistry aggregate = new AggregateRegistry();
    private final ServiceEntryRegistry serviceEntries;
    private final MemoryRegistry mock;
    private final KubeServiceRegistry kube;
    private final RemoteClusterRegistries remoteClusters;
    private final AmbientIndexController ambient;

    /**
     * Builds the registries --registries names, in order after the ServiceEntry registry, and
     * makes the aggregate the Environment's service discovery.
     *
     * @throws UnsupportedRegistryException for a registry this build cannot run (one line, naming it)
     */
    public ServiceRegistries(Options options, ConfigStoreController store, RegistryUpdates updates,
                             Environment environment, Readiness readiness) {
        MemoryRegistry memory = null;
        KubeServiceRegistry kubernetes = null;
        AmbientIndexController ambientIndex = null;
        for (String name : options.registries()) {
            switch (name) {
                case "Mock" -> memory = new MemoryRegistry("Mock", options.clusterId(), updates);
                case "Kubernetes" -> {
                    if (options.kubeClient() == null) {
                        throw new UnsupportedRegistryException("--registries Kubernetes: no Kubernetes client "
                                + "(no --kubeconfig, KUBECONFIG or in-cluster service account)");
                    }
                    KubeInformers informers = KubeInformers.register(options.kubeClient());
                    kubernetes = new KubeServiceRegistry(new KubeServiceRegistry.Options(options.clusterId(),
                            environment.domainSuffix(), options.systemNamespace(), options.features()),
                            informers, updates, environment::mesh, environment::networks);
                    if (options.ambient().enabled()) {
                        // istiod builds its ambient index beside the Kubernetes registry, from the same informers
                        ambientIndex = new AmbientIndexController(new AmbientIndexController.Options(
                                options.clusterId(), environment.domainSuffix(), options.systemNamespace(),
                                options.features().k8sServiceSelectWorkloadEntries(),
                                options.ambient().allowFromWaypoint()),
                                informers, updates, environment::mesh);
                        environment.setAmbientIndexes(ambientIndex.index());
                        environment.addMeshHandler(ambientIndex::meshChanged);
                        usePoliciesOf(store, environment, options, ambientIndex);
                        ambientIndex.watchConfig(store);
                    }
                }
                default -> throw new UnsupportedRegistryException("--registries " + name
                        + ": unknown service registry (known: Kubernetes, Mock)");
            }
        }
        serviceEntries = new ServiceEntryRegistry(store, updates, () -> environment.mesh().getTrustDomain(),
                options.clusterId());
        aggregate.addRegistry(serviceEntries);
        for (String kind : REGISTRY_KINDS) {
            store.registerEventHandler(kind, serviceEntries::onConfigEvent);
        }
        kube = kubernetes;
        remoteClusters = kube == null ? null : new RemoteClusterRegistries(aggregate, updates, environment,
                new KubeServiceRegistry.Options(options.clusterId(), environment.domainSuffix(),
                        options.systemNamespace(), options.features()), options.features().remoteClusterTimeout());
        if (kube != null) {
            // istiod's initServiceControllers: the Kubernetes registry after the ServiceEntry one,
            // each selecting the other's workloads (pods for ServiceEntries, WorkloadEntries for Services)
            aggregate.addRegistry(kube);
            kube.appendWorkloadHandler(serviceEntries::podChanged);
            serviceEntries.appendWorkloadHandler(kube::workloadEntryChanged);
            environment.addMeshHandler(kube::meshChanged);
            environment.addNetworksHandler(kube::networksChanged);
            environment.addMeshHandler(remoteClusters::meshChanged);
            environment.addNetworksHandler(remoteClusters::networksChanged);
        }
        mock = memory;
        if (mock != null) {
            aggregate.addRegistry(mock);
        }
        ambient = ambientIndex;
        environment.setServiceDiscovery(aggregate);
        readiness.register("registries-synced",
                () -> aggregate.hasSynced() && (ambient == null || ambient.hasSynced()));
    }

    /** For the start-up log. */
    public String describe() {
        return "registries=" + aggregate.registries().stream().map(r -> r.provider() + "/" + r.cluster()).toList();
    }

    /** The config stores delivered their initial load: the ServiceEntry registry has synced. */
    public void configSynced() {
        serviceEntries.markSynced();
    }

    /** istiod's pilot_services and istiod_managed_clusters gauges (registered once the metrics registry is up). */
    public void registerMetrics() {
        IstioGauge.register("pilot_services", "Total services known to pilot.", () -> aggregate.services().size());
        if (remoteClusters != null) {
            // istiod's multicluster gauge: the local cluster and those read through remote Secrets
            for (String type : List.of("local", "remote")) {
                IstioGauge.register("istiod_managed_clusters", "Number of clusters managed by istiod",
                        Map.of("cluster_type", type), () -> type.equals("local") ? 1 : remoteClusters.registries().size());
            }
        }
    }

    public AggregateRegistry aggregate() {
        return aggregate;
    }

    public ServiceEntryRegistry serviceEntries() {
        return serviceEntries;
    }

    /** The Kubernetes registry, when --registries includes Kubernetes; null otherwise. */
    public KubeServiceRegistry kubernetes() {
        return kube;
    }

    /**
     * The registries of remote clusters (the handler of the remote Secrets), when --registries
     * includes Kubernetes; null otherwise.
     */
    public RemoteClusterRegistries remoteClusters() {
        return remoteClusters;
    }

    /**
     * Workloads name the Authorizations that select them ({@code Workload.authorization_policies},
     * istiod's buildWorkloadPolicies): the index takes the converted policies again whenever an
     * AuthorizationPolicy or PeerAuthentication changes, and rebuilds its workloads with them.
     */
    private static void usePoliciesOf(ConfigStoreController store, Environment environment, Options options,
                                      AmbientIndexController index) {
        Consumer<ConfigEvent> changed = e -> {
            String root = environment.mesh().getRootNamespace().isEmpty() ? options.systemNamespace()
                    : environment.mesh().getRootNamespace();
            ZtunnelPolicies policies = ZtunnelPolicies.fromStore(store, root, options.ambient().dryRunAuthorizationPolicies());
            index.usePolicies((namespace, labels) -> WorkloadPolicySelection.forWorkload(policies, namespace, labels));
        };
        store.registerEventHandler("AuthorizationPolicy", changed);
        store.registerEventHandler("PeerAuthentication", changed);
    }

    /** The ambient index's controller, with ambient mode and --registries Kubernetes; null otherwise. */
    public AmbientIndexController ambient() {
        return ambient;
    }

    /** Stops the Kubernetes registries' event threads (their informers belong to the Kubernetes clients). */
    public void close() {
        if (ambient != null) {
            ambient.close();
        }
        if (kube != null) {
            kube.close();
            remoteClusters.close();
        }
    }

    /** The Mock registry, when --registries includes Mock; null otherwise. */
    public MemoryRegistry mock() {
        return mock;
    }
}
