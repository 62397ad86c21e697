package io.meshpilot.security.credentials;

import io.meshpilot.config.ConfigKey;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * TLS credentials by namespace and name (istiod's credentials controller): what gateways'
 * {@code credentialName} refers to and what the SDS generator serves. Implementations: the
 * {@code --credentialsDir} directory of Secret manifests ({@link DirectoryCredentialStore});
 * Kubernetes Secrets later. Thread-safe; lookups read an immutable snapshot.
 */
public interface CredentialStore {
    /** The kind of the {@link ConfigKey}s change listeners receive (and push requests carry). */
    String KIND = "Secret";

    /** Suffix of the resource name that asks for only the CA part of a credential (istiod's SdsCaSuffix). */
    String CA_SUFFIX = "-cacert";

    /** Told which credentials were added, changed or removed ({@link #KIND} keys). */
    @FunctionalInterface
    interface Listener {
        void changed(Set<ConfigKey> keys);
    }

    /** The valid credential {@code namespace/name}, if there is one. */
    Optional<Credential> get(String namespace, String name);

    /** Whether a valid credential {@code namespace/name} exists (e.g. a Gateway's credentialName). */
    default boolean exists(String namespace, String name) {
        return get(namespace, name).isPresent();
    }

    /**
     * The CA bundle for the resource {@code name} (which may end in {@code -cacert}), as istiod
     * finds it: the Secret named exactly so, else, for a {@code -cacert} name, the Secret
     * without the suffix; its {@code cacert}/{@code ca.crt}.
     */
    default Optional<String> caCertificate(String namespace, String name) {
        Optional<Credential> exact = get(namespace, name);
        if (exact.isPresent()) {
            return exact.get().ca();
        }
        if (name.endsWith(CA_SUFFIX)) {
            return get(namespace, name.substring(0, name.length() - CA_SUFFIX.length())).flatMap(Credential::ca);
        }
        return Optional.empty();
    }

    /** Every credential now, for debugging and tests. */
    Collection<Credential> all();

    void addListener(Listener l);

    void removeListener(Listener l);

    /** The key push requests and listeners use for a credential. */
    static ConfigKey key(String namespace, String name) {
        return new ConfigKey(KIND, namespace, name);
    }

    /** A store with nothing in it (no directory, or before Kubernetes is configured). */
    CredentialStore EMPTY = new CredentialStore() {
        @Override
        public Optional<Credential> get(String namespace, String name) {
            return Optional.empty();
        }

        @Override
        public Collection<Credential> all() {
            return List.of();
        }

        @Override
        public void addListener(Listener l) {
        }

        @Override
        public void removeListener(Listener l) {
        }
    };
}
