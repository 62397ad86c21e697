package io.meshpilot.registry.ambient;

import com.google.protobuf.Empty;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.security.v1beta1.PeerAuthentication.MutualTLS.Mode;
import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Group;
import io.meshpilot.api.workload.security.Match;
import io.meshpilot.api.workload.security.Rules;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.api.workload.security.StringMatch;
import io.meshpilot.config.Config;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * PeerAuthentication as ztunnel enforces it (istiod's convertPeerAuthentication and
 * convertedSelectorPeerAuthentications, pilot/pkg/serviceregistry/ambient/authorization.go).
 * ztunnel has no mTLS mode: STRICT is a DENY of connections without a peer principal. An
 * effective STRICT mode is the one static policy {@value #STATIC_STRICT_NAME} of the root
 * namespace; a workload policy with port-level modes that differ from what it inherits becomes
 * a DENY policy of its own, {@value #CONVERTED_PREFIX}{@code <name>}, which folds the inherited
 * STRICT in (two DENY policies could not express a port exception).
 */
public final class PeerAuthenticationConversion {
    /** istiod's staticStrictPolicyName ('_' cannot occur in Kubernetes names). */
    public static final String STATIC_STRICT_NAME = "istio_converted_static_strict";
    /** istiod's convertedPeerAuthenticationPrefix (model.GetAmbientPolicyConfigName). */
    public static final String CONVERTED_PREFIX = "converted_peer_authentication_";

    private PeerAuthenticationConversion() {
    }

    /** Denies connections that carry no peer principal (not mutual TLS). */
    private static Match withoutPrincipal() {
        return Match.newBuilder().addNotPrincipals(StringMatch.newBuilder().setPresence(Empty.getDefaultInstance()))
                .build();
    }

    /** The static STRICT policy every workload under an effective STRICT mode names (istiod's DefaultPolicy). */
    public static Authorization staticStrict(String rootNamespace) {
        return Authorization.newBuilder().setName(STATIC_STRICT_NAME).setNamespace(rootNamespace)
                .setScope(Scope.WORKLOAD_SELECTOR).setAction(Action.DENY)
                .addGroups(Group.newBuilder().addRules(Rules.newBuilder().addMatches(withoutPrincipal())))
                .build();
    }

    /** The name a workload PeerAuthentication's converted policy has ztunnel (its resource name is {@code ns/} this). */
    public static String convertedName(String peerAuthenticationName) {
        return CONVERTED_PREFIX + peerAuthenticationName;
    }

    /**
     * istiod's convertPeerAuthentication: the DENY policy ztunnel needs for workload policy
     * {@code workload}, given the namespace's and the mesh's policies (each null when none);
     * null when the policy needs none (not a workload policy with port-level modes, in the root
     * namespace, or nothing that the inherited or static STRICT policy does not already say).
     */
    public static Authorization convert(String rootNamespace, Config workload, Config namespacePolicy,
                                        Config meshPolicy) {
        PeerAuthentication pa = (PeerAuthentication) workload.spec();
        if (workload.namespace().equals(rootNamespace) || !pa.hasSelector() || pa.getPortLevelMtlsCount() == 0) {
            return null;
        }
        Mode mode = mode(pa);
        Mode ns = namespacePolicy == null ? null : mode((PeerAuthentication) namespacePolicy.spec());
        Mode mesh = meshPolicy == null ? null : mode((PeerAuthentication) meshPolicy.spec());
        List<Rules> rules = new ArrayList<>();
        List<Group> groups = new ArrayList<>();
        if (mode == Mode.STRICT) {
            rules.add(Rules.newBuilder().addMatches(withoutPrincipal()).build());
        }
        boolean nonStrictPort = false;
        for (Map.Entry<Integer, PeerAuthentication.MutualTLS> port : new TreeMap<>(pa.getPortLevelMtlsMap()).entrySet()) {
            Mode portMode = port.getValue().getMode();
            if (portMode == Mode.STRICT) {
                // the port is STRICT already by the inherited or the workload's own mode; the
                // grouping is istiod's (a STRICT mesh policy counts even under a non-STRICT namespace one)
                if (mode == Mode.STRICT || mode == Mode.UNSET && ns == Mode.STRICT
                        || (ns == null || ns == Mode.UNSET) && mesh == Mode.STRICT) {
                    continue;
                }
                groups.add(Group.newBuilder().addRules(Rules.newBuilder().addMatches(
                        withoutPrincipal().toBuilder().addDestinationPorts(port.getKey()))).build());
            } else if (portMode == Mode.PERMISSIVE || portMode == Mode.DISABLE) {
                if (mode == Mode.PERMISSIVE || mode == Mode.DISABLE) {
                    continue;
                }
                if (mode == Mode.UNSET && (ns != null && ns != Mode.STRICT
                        || ns == null && mesh != null && mesh != Mode.STRICT || ns == null && mesh == null)) {
                    continue; // not STRICT here and not inherited STRICT: nothing to except
                }
                nonStrictPort = true;
                // connections to other ports are denied by this clause set; this port is the exception
                rules.add(Rules.newBuilder().addMatches(Match.newBuilder().addNotDestinationPorts(port.getKey()))
                        .build());
            }
        }
        if (mode == Mode.STRICT && !nonStrictPort || rules.isEmpty() && groups.isEmpty()) {
            return null; // the static STRICT policy says it all, or there is nothing to say
        }
        boolean inheritsStrict = mesh == Mode.STRICT && (ns == null || ns == Mode.UNSET || ns == Mode.STRICT)
                || ns == Mode.STRICT;
        if (inheritsStrict && nonStrictPort) {
            rules.add(Rules.newBuilder().addMatches(withoutPrincipal()).build());
        }
        if (!rules.isEmpty()) {
            groups.add(Group.newBuilder().addAllRules(rules).build());
        }
        return Authorization.newBuilder().setName(convertedName(workload.name())).setNamespace(workload.namespace())
                .setScope(Scope.WORKLOAD_SELECTOR).setAction(Action.DENY).addAllGroups(groups).build();
    }

    /**
     * istiod's convertedSelectorPeerAuthentications: the PeerAuthentication-derived policies a
     * workload names, from the PeerAuthentications that apply to it (its namespace's without a
     * selector or with one that matches it, the root namespace's without a selector): the static
     * STRICT policy when its effective mode is STRICT, and its workload policy's converted form
     * when that carries port exceptions. Sorted.
     */
    public static List<String> effectivePolicies(String rootNamespace, List<Config> applicable) {
        Config mesh = null;
        Config namespace = null;
        Config workload = null;
        for (Config c : applicable) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            boolean wide = !pa.hasSelector() || pa.getSelector().getMatchLabelsCount() == 0;
            if (wide && c.namespace().equals(rootNamespace)) {
                mesh = older(mesh, c);
            } else if (wide) {
                namespace = older(namespace, c);
            } else if (!c.namespace().equals(rootNamespace)) {
                workload = older(workload, c);
            }
        }
        boolean strict = mesh != null && mode(mesh) == Mode.STRICT;
        if (namespace != null && mode(namespace) != Mode.UNSET) {
            strict = mode(namespace) == Mode.STRICT;
        }
        String portPolicy = null;
        if (workload != null) {
            PeerAuthentication pa = (PeerAuthentication) workload.spec();
            Mode mode = mode(pa);
            if (mode == Mode.STRICT) {
                strict = true;
            } else if (mode == Mode.PERMISSIVE || mode == Mode.DISABLE) {
                strict = false;
            }
            if (pa.getPortLevelMtlsCount() > 0) {
                boolean anyStrictPort = pa.getPortLevelMtlsMap().values().stream()
                        .anyMatch(m -> m.getMode() == Mode.STRICT);
                String converted = workload.namespace() + "/" + convertedName(workload.name());
                switch (mode) {
                    case STRICT -> {
                        if (pa.getPortLevelMtlsMap().values().stream()
                                .anyMatch(m -> m.getMode() == Mode.PERMISSIVE || m.getMode() == Mode.DISABLE)) {
                            portPolicy = converted;
                            strict = false; // the converted policy carries the STRICT default itself
                        }
                    }
                    case PERMISSIVE, DISABLE -> portPolicy = anyStrictPort ? converted : null;
                    default -> {
                        if (strict) {
                            // istiod looks for PERMISSIVE only here (a DISABLE port under inherited STRICT is not excepted)
                            if (pa.getPortLevelMtlsMap().values().stream().anyMatch(m -> m.getMode() == Mode.PERMISSIVE)) {
                                portPolicy = converted;
                                strict = false;
                            }
                        } else {
                            portPolicy = anyStrictPort ? converted : null;
                        }
                    }
                }
            }
        }
        TreeSet<String> out = new TreeSet<>();
        if (strict) {
            out.add(rootNamespace + "/" + STATIC_STRICT_NAME);
        }
        if (portPolicy != null) {
            out.add(portPolicy);
        }
        return List.copyOf(out);
    }

    /** The older of two policies (creation time; with none, the one seen first, as istiod's Before). */
    private static Config older(Config current, Config candidate) {
        if (current == null) {
            return candidate;
        }
        if (current.creationTimestamp() != null && candidate.creationTimestamp() != null
                && candidate.creationTimestamp().isBefore(current.creationTimestamp())) {
            return candidate;
        }
        return current;
    }

    private static Mode mode(Config c) {
        return mode((PeerAuthentication) c.spec());
    }

    private static Mode mode(PeerAuthentication pa) {
        return pa.hasMtls() ? pa.getMtls().getMode() : Mode.UNSET;
    }
}
