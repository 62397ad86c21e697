package io.meshpilot.security.credentials;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * Several clusters' credentials read as one, the first that has a Secret winning (istiod's
 * aggregate credentials controller: the proxy's cluster, then the config cluster). A listener
 * hears every store's changes: a change in any of them can change what a lookup finds.
 */
final class FirstFoundCredentials implements CredentialStore {
    private final List<CredentialStore> stores;

    FirstFoundCredentials(List<CredentialStore> stores) {
        this.stores = List.copyOf(stores);
    }

    @Override
    public Optional<Credential> get(String namespace, String name) {
        for (CredentialStore s : stores) {
            Optional<Credential> c = s.get(namespace, name);
            if (c.isPresent()) {
                return c;
            }
        }
        return Optional.empty();
    }

    @Override
    public Optional<String> caCertificate(String namespace, String name) {
        for (CredentialStore s : stores) {
            Optional<String> ca = s.caCertificate(namespace, name);
            if (ca.isPresent()) {
                return ca;
            }
        }
        return Optional.empty();
    }

    @Override
    public Collection<Credential> all() {
        List<Credential> out = new ArrayList<>();
        stores.forEach(s -> out.addAll(s.all()));
        return out;
    }

    @Override
    public void addListener(Listener l) {
        stores.forEach(s -> s.addListener(l));
    }

    @Override
    public void removeListener(Listener l) {
        stores.forEach(s -> s.removeListener(l));
    }
}
