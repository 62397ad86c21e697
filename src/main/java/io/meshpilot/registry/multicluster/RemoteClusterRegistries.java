package io.meshpilot.registry.multicluster;

import io.meshpilot.registry.RegistryUpdates;
import io.meshpilot.registry.aggregate.AggregateRegistry;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.model.Environment;
import io.meshpilot.registry.kube.KubeInformers;
import io.meshpilot.registry.kube.KubeServiceRegistry;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The Kubernetes registries of remote clusters (istiod's kube Multicluster controller): one
 * per cluster the remote Secrets name, with that cluster's ID, in the aggregate after the
 * local ones. Their services merge with the local ones of the same hostname (the aggregate),
 * their endpoints stay in their own shard, with the network and locality their own cluster
 * gives them. A cluster that leaves takes its services and endpoints with it, with a push.
 */
public final class RemoteClusterRegistries implements RemoteSecretController.ClusterHandler {
    private static final System.Logger LOG = System.getLogger(RemoteClusterRegistries.class.getName());
    /** How long a departing cluster's event thread may take to finish the event it is handling. */
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private final AggregateRegistry aggregate;
    private final RegistryUpdates updates;
    private final Environment environment;
    private final KubeServiceRegistry.Options local;
    private final Duration syncTimeout;
    private final Map<String, KubeServiceRegistry> byCluster = new ConcurrentHashMap<>();
    private final Map<KubeServiceRegistry, Added> added = new ConcurrentHashMap<>();

    /** Where a remote cluster came from and when (its sync deadline runs from then). */
    private record Added(String secret, long atNanos) {
    }

    /**
     * One remote cluster for {@code /debug/clusterz} (istiod's cluster.DebugInfo).
     *
     * @param syncStatus {@code syncing}, {@code synced}, or {@code timeout} (not synced within
     *                   PILOT_REMOTE_CLUSTER_TIMEOUT; it joins when it syncs)
     */
    public record ClusterStatus(String id, String secretName, String syncStatus) {
    }

    /**
     * @param local       the local Kubernetes registry's options: remote ones differ only in the cluster ID
     * @param syncTimeout PILOT_REMOTE_CLUSTER_TIMEOUT: how long a remote cluster may hold back sync (0: no limit)
     */
    public RemoteClusterRegistries(AggregateRegistry aggregate, RegistryUpdates updates, Environment environment,
                            KubeServiceRegistry.Options local, Duration syncTimeout) {
        this.aggregate = aggregate;
        this.updates = updates;
        this.environment = environment;
        this.local = local;
        this.syncTimeout = syncTimeout;
    }

    @Override
    public void clusterAdded(String clusterId, String secret, KubeClient client) {
        KubeServiceRegistry registry = new KubeServiceRegistry(new KubeServiceRegistry.Options(clusterId,
                local.domainSuffix(), local.systemNamespace(), local.features()), KubeInformers.register(client),
                updates, environment::mesh, environment::networks);
        KubeServiceRegistry previous = byCluster.put(clusterId, registry);
        if (previous != null) {
            remove(previous);
        }
        added.put(registry, new Added(secret, System.nanoTime()));
        aggregate.addRegistry(registry, syncTimeout);
        if (!syncTimeout.isZero()) {
            // a copy: the registry's own signal stays unsynced past the timeout
            registry.synced().copy().orTimeout(syncTimeout.toNanos(), TimeUnit.NANOSECONDS)
                    .whenComplete((synced, timeout) -> {
                        if (timeout != null) {
                            warnNotSynced(registry);
                        }
                    });
        }
    }

    /** istiod's remote_cluster_sync_timeouts: said once, when the cluster stops holding back readiness. */
    private void warnNotSynced(KubeServiceRegistry registry) {
        if (!registry.hasSynced() && byCluster.get(registry.cluster()) == registry) {
            LOG.log(Level.WARNING, "remote cluster " + registry.cluster() + " has not synced after "
                    + syncTimeout.toMillis() + " ms (PILOT_REMOTE_CLUSTER_TIMEOUT): readiness no longer waits for it;"
                    + " its services join when it syncs");
        }
    }

    @Override
    public void clusterDeleted(String clusterId) {
        KubeServiceRegistry registry = byCluster.remove(clusterId);
        if (registry != null) {
            remove(registry);
        }
    }

    private void remove(KubeServiceRegistry registry) {
        aggregate.removeRegistry(registry);
        added.remove(registry);
        registry.cleanup(STOP_WAIT);
        LOG.log(Level.INFO, "remote cluster " + registry.cluster() + " removed with its services and endpoints");
    }

    /** The remote clusters, by ID. */
    public List<ClusterStatus> status() {
        return byCluster.values().stream().sorted(Comparator.comparing(KubeServiceRegistry::cluster))
                .map(r -> {
                    Added a = added.get(r);
                    boolean late = a != null && !syncTimeout.isZero() && System.nanoTime() - a.atNanos() > syncTimeout.toNanos();
                    return new ClusterStatus(r.cluster(), a == null ? "" : a.secret(),
                            r.hasSynced() ? "synced" : late ? "timeout" : "syncing");
                }).toList();
    }

    /** The remote registries. */
    public List<KubeServiceRegistry> registries() {
        return List.copyOf(byCluster.values());
    }

    public void meshChanged() {
        byCluster.values().forEach(KubeServiceRegistry::meshChanged);
    }

    public void networksChanged() {
        byCluster.values().forEach(KubeServiceRegistry::networksChanged);
    }

    public void close() {
        byCluster.values().forEach(KubeServiceRegistry::close);
    }
}
