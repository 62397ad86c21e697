package io.meshpilot.security.credentials;

import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.bootstrap.StartupOrder;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.io.IOException;
import java.lang.System.Logger.Level;

/**
 * The credentials of the running server (istiod's credentials controller): the
 * {@code --credentialsDir} store, loaded with the config stores and watched; an empty store
 * without a directory. Kubernetes Secrets plug in here later as another
 * {@link CredentialStore}. Inject this and call {@link #store()}.
 */
@ApplicationScoped
public class CredentialsController {
    private static final System.Logger LOG = System.getLogger(CredentialsController.class.getName());
    /** Loaded with the config stores, before the DiscoveryServer subscribes to changes. */
    static final int PRIORITY = StartupOrder.CONFIG_STORES + 50;

    @Inject
    PilotArgs args;

    private volatile CredentialStore store = CredentialStore.EMPTY;
    private volatile DirectoryCredentialStore directory;

    void start(@Observes @Priority(PRIORITY) @Initialized(ApplicationScoped.class) Object event) {
        if (args.credentialsDir() == null) {
            LOG.log(Level.INFO, "credentials: no --credentialsDir");
            return;
        }
        DirectoryCredentialStore d = new DirectoryCredentialStore(args.credentialsDir());
        try {
            DirectoryCredentialStore.ScanResult r = d.start();
            LOG.log(Level.INFO, "credentials loaded dir=" + d.root()
                    + (java.nio.file.Files.isDirectory(d.root()) ? "" : " (absent: none)") + " files=" + r.files()
                    + " credentials=" + r.credentials() + " rejected=" + r.problems().size());
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot watch credentials dir " + d.root() + ": " + e.getMessage()
                    + " (loaded once, not reloaded)");
        }
        directory = d;
        store = d;
    }

    /** The credential store now (never null; empty without a credentials source). */
    public CredentialStore store() {
        return store;
    }

    /** The --credentialsDir store, or null when there is none. */
    public DirectoryCredentialStore directory() {
        return directory;
    }

    @PreDestroy
    void stop() {
        DirectoryCredentialStore d = directory;
        if (d != null) {
            d.close();
        }
    }
}
