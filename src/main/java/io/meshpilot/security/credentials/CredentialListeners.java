package io.meshpilot.security.credentials;

import io.meshpilot.config.ConfigKey;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/** The listeners of one credential store: each told which credentials changed, a failing one not stopping the rest. */
final class CredentialListeners {
    private static final System.Logger LOG = System.getLogger(CredentialListeners.class.getName());
    private final List<CredentialStore.Listener> listeners = new CopyOnWriteArrayList<>();

    void add(CredentialStore.Listener l) {
        listeners.add(l);
    }

    void remove(CredentialStore.Listener l) {
        listeners.remove(l);
    }

    void tell(Set<ConfigKey> changed) {
        for (CredentialStore.Listener l : listeners) {
            try {
                l.changed(changed);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "credential listener failed for " + changed, e);
            }
        }
    }
}
