package io.meshpilot.registry.ambient;

import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.config.Config;
import io.meshpilot.config.store.ConfigStore;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Every Authorization ztunnel gets for one state of the config (istiod's PolicyCollections,
 * pilot/pkg/serviceregistry/ambient/policies.go): the AuthorizationPolicies without targetRefs,
 * the workload PeerAuthentications' converted forms, and, once any PeerAuthentication exists,
 * the static STRICT policy; plus what could not be applied as written. Immutable.
 *
 * @param rootNamespace       the mesh config's root namespace
 * @param authorizations      by resource name ({@code namespace/name}, as ztunnel names them)
 * @param selectors           the matchLabels of the AuthorizationPolicies sent with a non-empty selector, by
 *                            resource name: what {@link WorkloadPolicySelection} attaches to a workload
 * @param peerAuthentications every PeerAuthentication, oldest first
 * @param unapplied           policies not applied as written, by {@code namespace/name}: istiod's
 *                            UnsupportedValue message
 */
public record ZtunnelPolicies(String rootNamespace, Map<String, Authorization> authorizations,
                              Map<String, Map<String, String>> selectors, List<Config> peerAuthentications,
                              Map<String, String> unapplied) {
    public ZtunnelPolicies {
        authorizations = Collections.unmodifiableMap(new TreeMap<>(authorizations));
        selectors = Map.copyOf(selectors);
        peerAuthentications = List.copyOf(peerAuthentications);
        unapplied = Collections.unmodifiableMap(new TreeMap<>(unapplied));
    }

    /** The policies of the config in {@code store} now, in the order a PushContext holds them (oldest first). */
    public static ZtunnelPolicies fromStore(ConfigStore store, String rootNamespace, boolean dryRunEnabled) {
        Comparator<Config> oldestFirst = Comparator.comparing(
                (Config c) -> c.creationTimestamp() == null ? Instant.EPOCH : c.creationTimestamp()).thenComparing(Config::key);
        List<Config> authorizationPolicies = new ArrayList<>(store.list("AuthorizationPolicy", null));
        authorizationPolicies.sort(Comparator.comparing(Config::namespace).thenComparing(oldestFirst));
        List<Config> peerAuthentications = new ArrayList<>(store.list("PeerAuthentication", null));
        peerAuthentications.sort(oldestFirst);
        return convert(rootNamespace, authorizationPolicies, peerAuthentications, dryRunEnabled);
    }

    /**
     * Converts the policies.
     *
     * @param authorizationPolicies every AuthorizationPolicy
     * @param peerAuthentications   every PeerAuthentication, oldest first
     * @param dryRunEnabled         AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY
     */
    public static ZtunnelPolicies convert(String rootNamespace, List<Config> authorizationPolicies,
                                          List<Config> peerAuthentications, boolean dryRunEnabled) {
        Map<String, Authorization> out = new TreeMap<>();
        Map<String, Map<String, String>> selectors = new TreeMap<>();
        Map<String, String> unapplied = new TreeMap<>();
        for (Config c : authorizationPolicies) {
            var converted = AuthorizationPolicyConversion.convert(c, rootNamespace, dryRunEnabled);
            if (converted == null) {
                continue;
            }
            String key = c.namespace() + "/" + c.name();
            if (converted.unsupported() != null) {
                unapplied.put(key, converted.unsupported());
            }
            if (converted.authorization() != null) {
                out.put(key, converted.authorization());
                var spec = (AuthorizationPolicy) c.spec();
                if (spec.getSelector().getMatchLabelsCount() > 0) {
                    selectors.put(key, spec.getSelector().getMatchLabelsMap());
                }
            }
        }
        for (Config c : peerAuthentications) {
            Authorization a = PeerAuthenticationConversion.convert(rootNamespace, c,
                    oldestWithoutSelector(peerAuthentications, c.namespace()),
                    oldestWithoutSelector(peerAuthentications, rootNamespace));
            if (a != null) {
                out.put(a.getNamespace() + "/" + a.getName(), a);
            }
        }
        if (!peerAuthentications.isEmpty()) {
            Authorization strict = PeerAuthenticationConversion.staticStrict(rootNamespace);
            out.put(rootNamespace + "/" + strict.getName(), strict);
        }
        return new ZtunnelPolicies(rootNamespace, out, selectors, peerAuthentications, unapplied);
    }

    /** istiod's PeerAuthByNamespace index: the oldest policy of the namespace without a selector; null when none. */
    private static Config oldestWithoutSelector(List<Config> oldestFirst, String namespace) {
        for (Config c : oldestFirst) {
            if (c.namespace().equals(namespace) && !((PeerAuthentication) c.spec()).hasSelector()) {
                return c;
            }
        }
        return null;
    }

    /** The PeerAuthentications of {@code namespace}, oldest first. */
    List<Config> peerAuthenticationsOf(String namespace) {
        List<Config> out = new ArrayList<>();
        for (Config c : peerAuthentications) {
            if (c.namespace().equals(namespace)) {
                out.add(c);
            }
        }
        return out;
    }
}
