package io.meshpilot.security.credentials;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1ConfigMap;
import io.kubernetes.client.openapi.models.V1ConfigMapList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.InformerController;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The CA bundles of the config cluster's ConfigMaps, what a {@code configmap://<ns>/<name>}
 * credential names (a BackendTLSPolicy's {@code caCertificateRefs}): istiod's credentials
 * controller watches every ConfigMap of the config cluster (no field selector exists for "has a
 * CA") and reads {@code cacert}, else {@code ca.crt} (GetConfigMapCaCert, ExtractRoot; the
 * bundle is not parsed here either: Envoy rejects a bad one). Only ConfigMaps holding one are
 * kept beyond the informer's cache, and only their bundle; listeners hear a {@code ConfigMap}
 * key when a bundle appears, changes or goes. Lookups are map reads: what a proxy asks for adds
 * nothing. Only the namespaces the mesh's {@code discoverySelectors} select are served.
 */
public final class KubeConfigMapCaCertificates implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KubeConfigMapCaCertificates.class.getName());
    /** The kind of the keys listeners hear and push requests carry (istiod's kind.ConfigMap). */
    public static final String KIND = "ConfigMap";
    private static final Backoff RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30));

    private final DiscoveryNamespacesFilter namespaces;
    private final SignallingInformer<V1ConfigMap, V1ConfigMapList> informer;
    private final InformerController<V1ConfigMap> controller;
    private final Map<String, String> bundles = new ConcurrentHashMap<>();
    private final CredentialListeners listeners = new CredentialListeners();

    /** Registers the ConfigMap informer on {@code client} (it starts with the client's informers). */
    public KubeConfigMapCaCertificates(KubeClient client) {
        this.namespaces = client.discoveryNamespaces();
        String name = "ConfigMap CA certificates";
        this.informer = new SignallingInformer<>(V1ConfigMap.class, ResourceListerWatcher.all(name,
                new GenericKubernetesApi<>(V1ConfigMap.class, V1ConfigMapList.class, "", "v1", "configmaps",
                        client.apiClient())), new Cache<>(), client.watchErrorHandler(name));
        this.controller = InformerController.start(name, informer, RETRY, this::reconcile);
        client.addInformer(name, informer);
    }

    private Outcome reconcile(String key, V1ConfigMap configMap) {
        Map<String, String> data = configMap == null || configMap.getData() == null ? Map.of() : configMap.getData();
        String now = bundle(data).orElse(null);
        String before = now == null ? bundles.remove(key) : bundles.put(key, now);
        if (now != null && now.equals(before) || now == null && before == null) {
            return Outcome.DONE;
        }
        LOG.log(Level.DEBUG, () -> "CA bundle of configmap " + key + (now == null ? " removed" : " updated"));
        int slash = key.indexOf('/');
        listeners.tell(Set.of(new ConfigKey(KIND, key.substring(0, slash), key.substring(slash + 1))));
        return Outcome.DONE;
    }

    /** istiod's ExtractRoot: {@code cacert}, else {@code ca.crt}, when not empty. */
    private static Optional<String> bundle(Map<String, String> data) {
        for (String k : new String[] {SecretManifests.GENERIC_CA, SecretManifests.TLS_CA}) {
            String v = data.get(k);
            if (v != null && !v.isEmpty()) {
                return Optional.of(v);
            }
        }
        return Optional.empty();
    }

    /** The CA bundle of ConfigMap {@code namespace/name}, when it has one. */
    public Optional<String> caCertificate(String namespace, String name) {
        return namespaces.selects(namespace) ? Optional.ofNullable(bundles.get(namespace + "/" + name)) : Optional.empty();
    }

    /** Why {@link #caCertificate} has nothing for {@code namespace/name}, in istiod's words. */
    public String problem(String namespace, String name) {
        V1ConfigMap configMap = namespaces.selects(namespace) ? informer.getIndexer().getByKey(namespace + "/" + name) : null;
        if (configMap == null) {
            return "configmap " + namespace + "/" + name + " not found";
        }
        Map<String, String> data = configMap.getData() == null ? Map.of() : configMap.getData();
        for (String k : new String[] {SecretManifests.GENERIC_CA, SecretManifests.TLS_CA}) {
            if (data.containsKey(k)) {
                return "found key \"" + k + "\", but it was empty";
            }
        }
        TreeSet<String> keys = new TreeSet<>(data.keySet());
        String found = keys.size() < 3 ? String.join(", ", keys)
                : String.join(", ", keys.stream().limit(3).toList()) + ", and " + (keys.size() - 3) + " more...";
        return "found secret, but didn't have expected keys cacert or ca.crt; found: " + found;
    }

    public void addListener(CredentialStore.Listener l) {
        listeners.add(l);
    }

    public void removeListener(CredentialStore.Listener l) {
        listeners.remove(l);
    }

    @Override
    public void close() {
        controller.close();
    }
}
