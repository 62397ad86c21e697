package io.meshpilot.security.kube;

import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.kubernetes.client.informer.ResourceEventHandler;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * istiod's namespace controller: the CA's trust bundle as ConfigMap {@value #CONFIG_MAP}
 * (key {@value #KEY}) in every namespace discoverySelectors select, so that workloads there
 * can verify istiod. Leader-only: every replica keeps the informers, only the leader writes
 * ({@link #lead()}). A deleted or edited ConfigMap is written again, a changed trust bundle
 * ({@link #trustBundleChanged()}) rewrites them all. Left alone, as by istiod: namespaces
 * discoverySelectors leave out, Kubernetes' own but kube-system ({@link #IGNORED_NAMESPACES}),
 * terminating ones, and those where RBAC forbids the write (one line, no retry loop).
 */
public final class NamespaceController {
    private static final System.Logger LOG = System.getLogger(NamespaceController.class.getName());

    public static final String CONFIG_MAP = "istio-ca-root-cert";
    public static final String KEY = "root-cert.pem";
    /** The label istiod puts on the ConfigMaps it writes. */
    static final Map<String, String> LABELS = Map.of("istio.io/config", "true");
    /**
     * istiod's inject.IgnoredNamespaces but kube-system, where ztunnel may run and mount the
     * ConfigMap (istiod writes it there since 1.21).
     */
    public static final Set<String> IGNORED_NAMESPACES = Set.of("kube-public", "kube-node-lease", "local-path-storage");
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));

    private final DiscoveryNamespacesFilter namespaces;
    private final CoreV1Api api;
    private final Supplier<String> rootCertPem;
    private final ControllerQueue<String> queue = new ControllerQueue<>("namespace-controller", RETRY,
            this::reconcileOrRetry);

    /**
     * Registers the ConfigMap informer with {@code client} (it starts with the client's informers).
     *
     * @param rootCertPem the trust bundle as PEM, read at each write
     */
    public NamespaceController(KubeClient client, Supplier<String> rootCertPem) {
        this.namespaces = client.discoveryNamespaces();
        this.api = new CoreV1Api(client.apiClient());
        this.rootCertPem = rootCertPem;
        namespaces.informer().addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1Namespace ns) {
                enqueue(ns.getMetadata().getName());
            }

            @Override
            public void onUpdate(V1Namespace old, V1Namespace ns) {
                enqueue(ns.getMetadata().getName()); // its labels may have made it selected
            }

            @Override
            public void onDelete(V1Namespace ns, boolean unknown) {
            }
        });
        namespaces.addHandler((selected, deselected) -> selected.forEach(this::enqueue));
        registerConfigMapInformer(client);
    }

    private void registerConfigMapInformer(KubeClient client) {
        String name = "configmaps */" + CONFIG_MAP;
        var informer = client.namedObjectInformer(name, V1ConfigMap.class,
                V1ConfigMapList.class, "configmaps", null, CONFIG_MAP);
        informer.addEventHandler(new ResourceEventHandler<>() {
            @Override
            public void onAdd(V1ConfigMap cm) {
            }

            @Override
            public void onUpdate(V1ConfigMap old, V1ConfigMap cm) {
                enqueue(cm.getMetadata().getNamespace()); // edited by someone else: written back
            }

            @Override
            public void onDelete(V1ConfigMap cm, boolean unknown) {
                enqueue(cm.getMetadata().getNamespace()); // deleted: created again
            }
        });
        client.addInformer(name, informer);
    }

    /**
     * Starts writing: every selected namespace now, then each change. The returned handle
     * stops the writing (leadership lost or server closing); a write under way finishes.
     */
    public AutoCloseable lead() {
        return queue.start(this::enqueueAll);
    }

    /** The trust bundle changed: every ConfigMap is rewritten (by the leader). */
    public void trustBundleChanged() {
        enqueueAll();
    }

    private void enqueueAll() {
        for (V1Namespace ns : namespaces.informer().getIndexer().list()) {
            enqueue(ns.getMetadata().getName());
        }
    }

    private void enqueue(String namespace) {
        queue.add(namespace);
    }

    private Outcome reconcileOrRetry(String namespace) {
        try {
            reconcile(namespace);
            return Outcome.DONE;
        } catch (ApiException e) {
            if (Thread.currentThread().isInterrupted()) {
                return Outcome.DONE;
            }
            LOG.log(Level.WARNING, "ConfigMap " + namespace + "/" + CONFIG_MAP + " not written (retrying): HTTP "
                    + e.getCode() + " " + e.getMessage());
            return Outcome.RETRY;
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "ConfigMap " + namespace + "/" + CONFIG_MAP + " not written (retrying): " + e, e);
            return Outcome.RETRY;
        }
    }

    /** Whether istiod writes the ConfigMap in {@code namespace}: selected, known, not terminating, not Kubernetes' own. */
    boolean writes(String namespace) {
        if (IGNORED_NAMESPACES.contains(namespace) || !namespaces.selects(namespace)) {
            return false;
        }
        V1Namespace ns = namespaces.informer().getIndexer().getByKey(namespace);
        return ns != null && ns.getMetadata().getDeletionTimestamp() == null
                && (ns.getStatus() == null || !"Terminating".equals(ns.getStatus().getPhase()));
    }

    private void reconcile(String namespace) throws ApiException {
        if (!writes(namespace)) {
            return;
        }
        String pem = rootCertPem.get();
        V1ConfigMap existing;
        try {
            existing = api.readNamespacedConfigMap(CONFIG_MAP, namespace).execute();
        } catch (ApiException e) {
            if (e.getCode() != 404) {
                throw e;
            }
            existing = null;
        }
        if (existing == null) {
            try {
                api.createNamespacedConfigMap(namespace, new V1ConfigMap()
                        .metadata(new V1ObjectMeta().name(CONFIG_MAP).namespace(namespace).labels(LABELS))
                        .data(Map.of(KEY, pem))).execute();
                LOG.log(Level.DEBUG, () -> "ConfigMap " + namespace + "/" + CONFIG_MAP + " created");
            } catch (ApiException e) {
                if (e.getCode() == 409) {
                    queue.add(namespace); // created meanwhile: compare again
                } else if (e.getCode() == 403) {
                    skipForbidden(namespace, e); // no role there, or the namespace terminating
                } else if (e.getCode() != 404) { // 404: the namespace went away meanwhile
                    throw e;
                }
            }
            return;
        }
        Map<String, String> data = existing.getData();
        if (data != null && Objects.equals(data.get(KEY), pem)) {
            return;
        }
        // the resourceVersion read is the precondition: a concurrent change makes this a 409 and a retry
        existing.putDataItem(KEY, pem);
        try {
            api.replaceNamespacedConfigMap(CONFIG_MAP, namespace, existing).execute();
        } catch (ApiException e) {
            if (e.getCode() != 403) {
                throw e;
            }
            skipForbidden(namespace, e);
            return;
        }
        LOG.log(Level.DEBUG, () -> "ConfigMap " + namespace + "/" + CONFIG_MAP + " updated");
    }

    /**
     * As istiod: a write RBAC refuses is not retried (asking again would not help); the next
     * change of the namespace or the trust bundle tries again, so a role granted later takes effect.
     */
    private static void skipForbidden(String namespace, ApiException e) {
        LOG.log(Level.INFO, "ConfigMap " + namespace + "/" + CONFIG_MAP + " not written: the API server forbids it ("
                + firstLine(e.getResponseBody()) + "); left alone until the namespace or the trust bundle changes");
    }

    private static String firstLine(String body) {
        if (body == null) {
            return "";
        }
        String line = body.strip().lines().findFirst().orElse("");
        return line.length() > 300 ? line.substring(0, 300) + "..." : line;
    }
}
