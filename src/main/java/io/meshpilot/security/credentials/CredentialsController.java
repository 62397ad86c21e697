package io.meshpilot.security.credentials;

import io.meshpilot.config.ConfigKey;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The credentials of the running server (istiod's credentials controller), itself the
 * {@link CredentialStore} everyone reads: it delegates to the {@code --credentialsDir}
 * store (loaded with the config stores, watched), or to an empty one without a directory.
 * Kubernetes Secrets plug in later with {@link #use(CredentialStore)}; listeners registered
 * here follow the store in use, so nobody has to re-subscribe.
 */
public final class CredentialsController implements CredentialStore, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(CredentialsController.class.getName());
    private volatile CredentialStore store = CredentialStore.EMPTY;
    private volatile DirectoryCredentialStore directory;
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private final Listener forward = keys -> listeners.forEach(l -> {
        try {
            l.changed(keys);
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "credential listener failed", e);
        }
    });

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
        DirectoryCredentialStore d = directory;
        if (d != null) {
            d.close();
        }
    }
}
