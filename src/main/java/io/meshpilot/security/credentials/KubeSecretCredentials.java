package io.meshpilot.security.credentials;

import io.kubernetes.client.informer.cache.Cache;
import io.kubernetes.client.openapi.models.V1Secret;
import io.kubernetes.client.openapi.models.V1SecretList;
import io.kubernetes.client.util.generic.GenericKubernetesApi;
import io.meshpilot.kube.DiscoveryNamespacesFilter;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.ResourceListerWatcher;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.kube.controllers.InformerController;
import io.meshpilot.kube.controllers.SignallingInformer;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The TLS credentials of one cluster's Secrets (istiod's {@code credentials/kube} controller),
 * read through an informer on the controller kit. Every Secret but Helm releases and
 * service-account tokens is watched (istiod's field selector); one holding none of the
 * credential keys ({@code tls.crt}/{@code tls.key}, {@code cert}/{@code key}, {@code ca.crt},
 * {@code cacert}) is not a credential and is passed over in silence. What a gateway gets is
 * decided when it asks, by the SDS generator: nothing is served unasked. Only the namespaces the
 * mesh's {@code discoverySelectors} select are served (istiod's informer filter), decided at each
 * lookup, so a change of selectors needs no re-read.
 *
 * <p>Bad input loses nothing: a Secret whose key does not match its certificate, whose PEM
 * does not parse or whose keys are incomplete is logged with the reason and keeps serving its
 * last good version (none, if it never had one). An expired or not yet valid certificate is
 * logged and still served, as istiod serves it. Listeners hear the key of each Secret whose
 * served credential changed.
 */
public final class KubeSecretCredentials implements CredentialStore, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(KubeSecretCredentials.class.getName());
    /** istiod's SecretsFieldSelector: the two kinds of large Secrets that never hold a credential. */
    static final String FIELD_SELECTOR = "type!=helm.sh/release.v1,type!=kubernetes.io/service-account-token";
    private static final Backoff RETRY = new Backoff(Duration.ofMillis(100), Duration.ofSeconds(30));
    private static final Set<String> CREDENTIAL_KEYS = Set.of(SecretManifests.TLS_CERT, SecretManifests.TLS_KEY,
            SecretManifests.TLS_CA, SecretManifests.GENERIC_CERT, SecretManifests.GENERIC_KEY, SecretManifests.GENERIC_CA);

    private final String cluster;
    private final DiscoveryNamespacesFilter namespaces;
    private final InformerController<V1Secret> controller;
    private final Map<String, Credential> byKey = new ConcurrentHashMap<>();
    private final CredentialListeners listeners = new CredentialListeners();

    /** Registers the Secret informer on {@code client} (it starts with the client's informers). */
    public KubeSecretCredentials(KubeClient client, String cluster) {
        this.cluster = cluster;
        this.namespaces = client.discoveryNamespaces();
        String name = "Secret credentials";
        SignallingInformer<V1Secret, V1SecretList> informer = new SignallingInformer<>(V1Secret.class,
                ResourceListerWatcher.of(name, new GenericKubernetesApi<>(V1Secret.class, V1SecretList.class, "", "v1",
                        "secrets", client.apiClient()), null, null, FIELD_SELECTOR),
                new Cache<>(), client.watchErrorHandler(name));
        this.controller = InformerController.start(name + " of cluster " + cluster, informer, RETRY, this::reconcile);
        client.addInformer(name, informer);
    }

    private Outcome reconcile(String key, V1Secret secret) {
        Credential before = byKey.get(key);
        Map<String, byte[]> data = secret == null || secret.getData() == null ? Map.of() : secret.getData();
        if (data.keySet().stream().noneMatch(CREDENTIAL_KEYS::contains)) {
            if (before != null) {
                byKey.remove(key);
                LOG.log(Level.INFO, "credential " + key + " of cluster " + cluster
                        + (secret == null ? " removed with its Secret" : " removed: the Secret holds no credential keys"));
                notify(before);
            }
            return Outcome.DONE;
        }
        Credential now;
        try {
            now = SecretManifests.credential(secret.getMetadata().getNamespace(), secret.getMetadata().getName(), data,
                    "cluster " + cluster);
        } catch (IllegalArgumentException e) {
            LOG.log(Level.WARNING, "invalid credential secret " + key + " of cluster " + cluster + ": " + e.getMessage()
                    + (before == null ? "; not served" : "; its previous version is still served"));
            return Outcome.DONE;
        }
        String validity = SecretManifests.validityProblem(now, Instant.now());
        if (validity != null) {
            LOG.log(Level.WARNING, "invalid certificates: credential secret " + key + " of cluster " + cluster + ": "
                    + validity + " (served as it is, as istiod serves it)");
        }
        if (now.sameContent(before)) {
            return Outcome.DONE;
        }
        byKey.put(key, now);
        notify(now);
        return Outcome.DONE;
    }

    private void notify(Credential changed) {
        listeners.tell(Set.of(CredentialStore.key(changed.namespace(), changed.name())));
    }

    @Override
    public Optional<Credential> get(String namespace, String name) {
        return namespaces.selects(namespace) ? Optional.ofNullable(byKey.get(namespace + "/" + name)) : Optional.empty();
    }

    @Override
    public Collection<Credential> all() {
        return byKey.values().stream().filter(c -> namespaces.selects(c.namespace())).toList();
    }

    @Override
    public void addListener(Listener l) {
        listeners.add(l);
    }

    @Override
    public void removeListener(Listener l) {
        listeners.remove(l);
    }

    @Override
    public void close() {
        controller.close();
    }
}
