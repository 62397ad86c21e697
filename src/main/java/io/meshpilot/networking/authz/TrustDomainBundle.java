package io.meshpilot.networking.authz;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;

/**
 * The mesh's trust domain and its aliases (meshConfig {@code trustDomain},
 * {@code trustDomainAliases}), as istiod's trustdomain.Bundle uses them: a principal
 * {@code <td>/ns/<ns>/sa/<sa>} naming the trust domain, an alias or {@code cluster.local}
 * (which stands for the local trust domain) matches the same identity in every one of them.
 *
 * @param trustDomains the trust domain first, then its aliases
 */
record TrustDomainBundle(List<String> trustDomains) {
    static final String CLUSTER_LOCAL = "cluster.local";

    TrustDomainBundle {
        trustDomains = List.copyOf(trustDomains);
    }

    static TrustDomainBundle of(MeshConfig mesh) {
        List<String> tds = new ArrayList<>();
        tds.add(mesh.getTrustDomain().isEmpty() ? CLUSTER_LOCAL : mesh.getTrustDomain());
        tds.addAll(mesh.getTrustDomainAliasesList());
        return new TrustDomainBundle(tds);
    }

    /** istiod's ReplaceTrustDomainAliases. */
    List<String> replaceAliases(List<String> principals) {
        if (principals.isEmpty()) {
            return principals;
        }
        List<String> out = new ArrayList<>();
        for (String principal : principals) {
            String[] parts = principal.split("/", -1);
            // no trust domain enforced: not a 5-part SPIFFE path, or a "*" trust domain
            if (parts.length != 5 || parts[0].equals("*")) {
                out.add(principal);
                continue;
            }
            String td = parts[0];
            if (!matchesAny(td) && !td.equals(CLUSTER_LOCAL)) {
                out.add(principal); // a foreign trust domain stays as written
                continue;
            }
            List<String> forAliases = new ArrayList<>();
            for (String alias : trustDomains) {
                String replaced = suffixMatch(alias, td) ? principal
                        : alias + principal.substring(principal.indexOf('/'));
                if (!forAliases.contains(replaced)) {
                    forAliases.add(replaced);
                }
            }
            out.addAll(forAliases);
        }
        return out;
    }

    /** istiod's ExpandTrustDomainAliases (for {@code source.trustDomain}). */
    List<String> expandAliases(List<String> values) {
        LinkedHashSet<String> out = new LinkedHashSet<>();
        for (String v : values) {
            if (trustDomains.contains(v)) {
                out.addAll(trustDomains);
            } else {
                out.add(v);
            }
        }
        return List.copyOf(out);
    }

    private boolean matchesAny(String td) {
        for (String s : trustDomains) {
            if (td.equals(s) || s.equals("*") || prefixMatch(td, s) || prefixMatch(s, td) || suffixMatch(td, s)
                    || suffixMatch(s, td)) {
                return true;
            }
        }
        return false;
    }

    private static boolean prefixMatch(String a, String pattern) {
        return pattern.endsWith("*") && a.startsWith(pattern.substring(0, pattern.length() - 1));
    }

    private static boolean suffixMatch(String a, String pattern) {
        return pattern.startsWith("*") && a.endsWith(pattern.substring(1));
    }
}
