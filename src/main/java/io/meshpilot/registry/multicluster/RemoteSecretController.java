package io.meshpilot.registry.multicluster;

import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.util.KubeConfig;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.SignallingInformer;
import io.meshpilot.kube.ResourceListerWatcher;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;

/**
 * istiod's multicluster secret controller: Secrets labelled {@code istio/multiCluster: "true"}
 * in the cluster-registries namespace hold the kubeconfigs of remote clusters, one data key
 * per cluster ID. Each key becomes a remote cluster (a {@link KubeClient} handed to the
 * {@link ClusterHandler}, then started); a changed kubeconfig replaces the cluster, a removed key
 * or Secret removes it.
 *
 * <p>As istiod: a key naming the local cluster is ignored, as is a cluster ID another Secret
 * registered first; a kubeconfig that cannot be used is logged (naming the Secret and key)
 * and skipped, leaving the other clusters, and the cluster's previous kubeconfig if it had
 * one, as they were. Events are handled on one thread, from the informer's current state.
 */
public final class RemoteSecretController implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(RemoteSecretController.class.getName());
    public static final String LABEL = "istio/multiCluster";
    static final String SELECTOR = LABEL + "=true";

    /** What a remote cluster's arrival and departure do (istiod's ClusterHandler). */
    public interface ClusterHandler {
        /**
         * Registers what reads the cluster on {@code client}; the client starts right after.
         *
         * @param secret the Secret ({@code namespace/name}) the cluster's kubeconfig came from
         */
        void clusterAdded(String clusterId, String secret, KubeClient client);

        /** The cluster is gone (or about to be replaced): forget everything read from it. */
        void clusterDeleted(String clusterId);

        /** Each of {@code handlers}, in order (deleted in reverse: what was added last goes first). */
        static ClusterHandler all(ClusterHandler... handlers) {
            List<ClusterHandler> inOrder = List.of(handlers);
            return new ClusterHandler() {
                @Override
                public void clusterAdded(String clusterId, String secret, KubeClient client) {
                    inOrder.forEach(h -> h.clusterAdded(clusterId, secret, client));
                }

                @Override
                public void clusterDeleted(String clusterId) {
                    inOrder.reversed().forEach(h -> h.clusterDeleted(clusterId));
                }
            };
        }
    }

    /**
     * @param namespace      --clusterRegistriesNamespace
     * @param localClusterId --clusterID: never replaced by a remote Secret
     * @param qps            the remote clients' request rate (--kubernetesApiQPS, as the local client)
     * @param burst          --kubernetesApiBurst
     */
    public record Options(String namespace, String localClusterId, double qps, int burst) {
    }

    /** A running remote cluster and the digest of the kubeconfig it was built from. */
    private record Remote(String clusterId, KubeClient client, byte[] sha256) {
    }

    private final Options options;
    private final ClusterHandler handler;
    private final SignallingInformer<V1Secret, V1SecretList> informer;
    /** Never used: a Secret that cannot be handled is logged and waits for its next change. */
    private static final Backoff NO_RETRY = Backoff.fixed(Duration.ofSeconds(1));
    private static final Duration STOP_WAIT = Duration.ofSeconds(5);
    private final ControllerQueue<String> queue = new ControllerQueue<>("remote-secrets", NO_RETRY, key -> {
        reconcile(key);
        return Outcome.DONE;
    });
    private final ControllerQueue<String>.Term term;
    /** secret key -> cluster ID -> cluster; event thread only (and the end of its term). */
    private final Map<String, Map<String, Remote>> bySecret = new HashMap<>();
    private volatile Map<String, String> clusterSecrets = Map.of();

    /** Registers the Secret informer on the local client (before it starts) and starts the event thread. */
    public RemoteSecretController(KubeClient local, Options options, ClusterHandler handler) {
        this.options = options;
        this.handler = handler;
        String name = "Secret " + options.namespace() + " " + SELECTOR;
        this.informer = new SignallingInformer<>(V1Secret.class, ResourceListerWatcher.of(name,
                new GenericKubernetesApi<>(V1Secret.class, V1SecretList.class, "", "v1", "secrets", local.apiClient()),
                options.namespace(), SELECTOR, null), new Cache<>(), local.watchErrorHandler(name));
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Secret s) {
                changed(s);
            }

            @Override
            public void onUpdate(V1Secret before, V1Secret s) {
                changed(s);
            }

            @Override
            public void onDelete(V1Secret s, boolean finalStateUnknown) {
                changed(s);
            }
        });
        local.addInformer(name, informer);
        // the clients are closed once no reconcile runs any more: none is made after
        term = queue.start(informer.synced(), this::initialSync, this::closeClients);
    }

    private void changed(V1Secret s) {
        queue.add(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName());
    }

    private void initialSync() {
        for (V1Secret s : informer.getIndexer().list()) {
            reconcile(s.getMetadata().getNamespace() + "/" + s.getMetadata().getName());
        }
        LOG.log(Level.INFO, () -> "multicluster remote secrets synced: " + clusterSecrets.size() + " remote cluster(s) "
                + clusterSecrets.keySet());
    }

    private void closeClients() {
        bySecret.values().forEach(remotes -> remotes.values().forEach(r -> r.client().close()));
        bySecret.clear();
    }

    /** Brings the clusters of one Secret to what the Secret holds now (nothing, when it is gone). */
    private void reconcile(String secretKey) {
        try {
            V1Secret secret = informer.getIndexer().getByKey(secretKey);
            Map<String, byte[]> data = secret == null || secret.getData() == null ? Map.of() : secret.getData();
            Map<String, Remote> current = bySecret.computeIfAbsent(secretKey, k -> new HashMap<>());
            for (String id : List.copyOf(current.keySet())) {
                if (!data.containsKey(id)) {
                    LOG.log(Level.INFO, "Deleting cluster_id=" + id + " configured by secret=" + secretKey);
                    stop(current.remove(id));
                }
            }
            new TreeMap<>(data).forEach((id, kubeconfig) -> addOrUpdate(secretKey, current, id, kubeconfig));
            if (current.isEmpty()) {
                bySecret.remove(secretKey);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "remote secret " + secretKey + " could not be handled", e);
        }
        Map<String, String> clusters = new TreeMap<>();
        bySecret.forEach((secret, remotes) -> remotes.keySet().forEach(id -> clusters.put(id, secret)));
        clusterSecrets = Map.copyOf(clusters);
    }

    private void addOrUpdate(String secretKey, Map<String, Remote> current, String id, byte[] kubeconfig) {
        if (id.equals(options.localClusterId())) {
            LOG.log(Level.INFO, "ignoring cluster " + id + " from secret " + secretKey
                    + " as it would overwrite the local cluster");
            return;
        }
        byte[] sha = sha256(kubeconfig);
        Remote previous = current.get(id);
        if (previous != null && Arrays.equals(previous.sha256(), sha)) {
            return; // kubeconfig unchanged
        }
        if (previous == null) {
            String owner = ownerOf(id);
            if (owner != null) {
                LOG.log(Level.WARNING, "cluster " + id + " from secret " + secretKey
                        + " has already been registered by secret " + owner + "; ignored");
                return;
            }
        }
        String action = previous == null ? "Adding" : "Updating";
        String source = "kubeconfig of cluster_id=" + id + " from secret=" + secretKey + " key=" + id;
        KubeClient client;
        try {
            KubeConfig config = RemoteKubeconfig.parse(new String(kubeconfig, StandardCharsets.UTF_8));
            client = KubeClient.create(config, id, source, options.qps(), options.burst());
        } catch (IllegalArgumentException | IOException e) {
            LOG.log(Level.ERROR, action + " cluster_id=" + id + " from secret=" + secretKey + " (key " + id
                    + ") failed: " + e.getMessage() + (previous == null ? "; the cluster is not added"
                    : "; the cluster keeps its previous kubeconfig"));
            return;
        }
        LOG.log(Level.INFO, action + " cluster_id=" + id + " from secret=" + secretKey + ": " + client.describe());
        if (previous != null) {
            stop(current.remove(id));
        }
        try {
            handler.clusterAdded(id, secretKey, client);
            client.start();
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, action + " cluster_id=" + id + " from secret=" + secretKey + " failed", e);
            handler.clusterDeleted(id);
            client.close();
            return;
        }
        current.put(id, new Remote(id, client, sha));
    }

    private String ownerOf(String clusterId) {
        for (var e : bySecret.entrySet()) {
            if (e.getValue().containsKey(clusterId)) {
                return e.getKey();
            }
        }
        return null;
    }

    private void stop(Remote remote) {
        try {
            handler.clusterDeleted(remote.clusterId());
        } finally {
            remote.client().close();
        }
    }

    private static byte[] sha256(byte[] data) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(data);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** The Secrets present at start have been handled (their clusters added or refused). */
    public boolean hasSynced() {
        return queue.hasSynced();
    }

    /** Completes once {@link #hasSynced}: for the sync waiter. */
    public CompletableFuture<Void> synced() {
        return queue.synced();
    }

    /** Remote cluster ID -> the Secret ({@code namespace/name}) it came from. */
    public Map<String, String> remoteClusters() {
        return clusterSecrets;
    }

    public String describe() {
        return "remote secrets in " + options.namespace() + " (" + SELECTOR + ")";
    }

    /** Stops the event thread and every remote client (the handler's registries stop with the server). */
    @Override
    public void close() {
        term.close(STOP_WAIT);
    }
}
