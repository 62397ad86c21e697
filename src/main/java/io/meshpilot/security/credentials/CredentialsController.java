package io.meshpilot.security.credentials;

import io.meshpilot.config.ConfigKey;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The credentials of the running server (istiod's credentials controller), itself the
 * {@link CredentialStore} everyone reads: it delegates to the {@code --credentialsDir}
 * store (loaded with the config stores, watched), or to an empty one without a directory, or,
 * in Kubernetes mode, to the config cluster's Secrets ({@link #useKubernetes}). Listeners
 * registered here follow the store in use, so nobody has to re-subscribe.
 *
 * <p>SDS reads per proxy cluster ({@link #forCluster}): in Kubernetes mode a proxy of a remote
 * cluster ({@link #addCluster}) gets its own cluster's Secrets first, then the config
 * cluster's, and is authorized by its own cluster's RBAC, as istiod's multicluster credentials
 * controller does; without Kubernetes every proxy reads the one store, with no RBAC.
 */
public final class CredentialsController implements CredentialStore, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CredentialsController.class.getName());
    private volatile CredentialStore store = CredentialStore.EMPTY;
    private volatile DirectoryCredentialStore directory;
    /** Kubernetes mode: the config cluster's ID; null without Kubernetes. */
    private volatile String configCluster;
    /** Kubernetes mode: the config cluster's ConfigMap CA bundles; null without Kubernetes. */
    private volatile KubeConfigMapCaCertificates configMaps;
    /** Kubernetes mode: each cluster's Secrets and RBAC, the config cluster's included. */
    private final Map<String, ClusterCredentials> clusters = new ConcurrentHashMap<>();
    private final CredentialListeners listeners = new CredentialListeners();
    private final Listener forward = listeners::tell;

    /**
     * Loads and watches {@code credentialsDir} (--credentialsDir), or serves none when it is
     * null. Loaded with the config stores, before the DiscoveryServer subscribes to changes.
     */
    public void start(Path credentialsDir) {
        if (credentialsDir == null) {
            LOG.log(Level.INFO, "credentials: no --credentialsDir");
            return;
        }
        DirectoryCredentialStore d = new DirectoryCredentialStore(credentialsDir);
        try {
            DirectoryCredentialStore.ScanResult r = d.start();
            LOG.log(Level.INFO, "credentials loaded dir=" + d.root()
                    + (Files.isDirectory(d.root()) ? "" : " (absent: none)") + " files=" + r.files()
                    + " credentials=" + r.credentials() + " rejected=" + r.problems().size());
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot watch credentials dir " + d.root() + ": " + e.getMessage()
                    + " (loaded once, not reloaded)");
        }
        directory = d;
        use(d);
    }

    /**
     * Serves credentials from {@code next} from now on (the Kubernetes Secrets controller);
     * listeners hear about every credential that differs between the two.
     */
    public synchronized void use(CredentialStore next) {
        CredentialStore before = store;
        before.removeListener(forward);
        store = next;
        next.addListener(forward);
        Set<ConfigKey> changed = new HashSet<>();
        before.all().forEach(c -> changed.add(CredentialStore.key(c.namespace(), c.name())));
        next.all().forEach(c -> changed.add(CredentialStore.key(c.namespace(), c.name())));
        changed.removeIf(k -> {
            var a = before.get(k.namespace(), k.name());
            var b = next.get(k.namespace(), k.name());
            return a.isPresent() && a.get().sameContent(b.orElse(null));
        });
        if (!changed.isEmpty()) {
            forward.changed(Set.copyOf(changed));
        }
    }

    /**
     * Kubernetes mode (istiod's credentials controller of the config cluster): serves
     * {@code secrets} from now on, SDS authorized by {@code authorizer}.
     */
    public void useKubernetes(String clusterId, KubeSecretCredentials secrets, SecretReadAuthorizer authorizer) {
        clusters.put(clusterId, new ClusterCredentials(secrets, authorizer));
        configCluster = clusterId;
        use(secrets);
    }

    /**
     * Kubernetes mode: the config cluster's ConfigMap CA bundles serve {@code configmap://}
     * credentials from now on (istiod reads ConfigMaps of the config cluster only); their
     * changes reach this controller's listeners.
     */
    public void useConfigMaps(KubeConfigMapCaCertificates caCertificates) {
        caCertificates.addListener(forward);
        configMaps = caCertificates;
    }

    /**
     * A remote cluster's Secrets and RBAC, for the proxies of that cluster; owned from now on
     * (closed when the cluster leaves or is replaced).
     */
    public void addCluster(String clusterId, KubeSecretCredentials secrets, SecretReadAuthorizer authorizer) {
        secrets.addListener(forward);
        retire(clusters.put(clusterId, new ClusterCredentials(secrets, authorizer)));
    }

    /** A remote cluster that left: its proxies get no Secrets any more. */
    public void removeCluster(String clusterId) {
        if (!clusterId.equals(configCluster)) {
            retire(clusters.remove(clusterId));
        }
    }

    private void retire(ClusterCredentials gone) {
        if (gone != null) {
            gone.secrets().removeListener(forward);
            if (gone.secrets() instanceof AutoCloseable closeable) {
                try {
                    closeable.close();
                } catch (Exception e) {
                    LOG.log(Level.WARNING, "closing a remote cluster's credentials failed: " + e);
                }
            }
        }
    }

    /**
     * What SDS reads for a proxy of {@code clusterId} (blank: the config cluster's), or empty
     * for a cluster this server does not know (istiod: "proxy is from an unknown cluster").
     */
    public Optional<ClusterCredentials> forCluster(String clusterId) {
        String config = configCluster;
        if (config == null) {
            return Optional.of(new ClusterCredentials(store, SecretReadAuthorizer.NO_RBAC));
        }
        String id = clusterId == null || clusterId.isBlank() ? config : clusterId;
        ClusterCredentials own = clusters.get(id);
        if (own == null) {
            return Optional.empty();
        }
        ClusterCredentials configured = clusters.get(config);
        if (id.equals(config) || configured == null) {
            return Optional.of(own);
        }
        return Optional.of(new ClusterCredentials(new FirstFoundCredentials(List.of(own.secrets(), configured.secrets())),
                own.authorizer()));
    }

    /** The credential store in use now (never null; empty without a credentials source). */
    public CredentialStore store() {
        return store;
    }

    @Override
    public Optional<Credential> get(String namespace, String name) {
        return store.get(namespace, name);
    }

    @Override
    public boolean exists(String namespace, String name) {
        return store.exists(namespace, name);
    }

    @Override
    public Optional<String> caCertificate(String namespace, String name) {
        return store.caCertificate(namespace, name);
    }

    /**
     * The CA bundle of the config cluster's ConfigMap {@code namespace/name} (a
     * {@code configmap://} credential); none without Kubernetes.
     */
    public Optional<String> configMapCaCertificate(String namespace, String name) {
        KubeConfigMapCaCertificates c = configMaps;
        return c == null ? Optional.empty() : c.caCertificate(namespace, name);
    }

    /** Why {@link #configMapCaCertificate} has nothing for {@code namespace/name}. */
    public String configMapCaProblem(String namespace, String name) {
        KubeConfigMapCaCertificates c = configMaps;
        return c == null ? "configmap access not enabled: ConfigMaps are read in Kubernetes mode only"
                : c.problem(namespace, name);
    }

    @Override
    public Collection<Credential> all() {
        return store.all();
    }

    @Override
    public void addListener(Listener l) {
        listeners.add(l);
    }

    @Override
    public void removeListener(Listener l) {
        listeners.remove(l);
    }

    /** The --credentialsDir store, or null when there is none. */
    public DirectoryCredentialStore directory() {
        return directory;
    }

    @Override
    public void close() {
        clusters.keySet().forEach(this::removeCluster);
        DirectoryCredentialStore d = directory;
        if (d != null) {
            d.close();
        }
    }
}
