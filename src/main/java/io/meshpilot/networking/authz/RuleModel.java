package io.meshpilot.networking.authz;

import io.envoyproxy.envoy.config.rbac.v3.Permission;
import io.envoyproxy.envoy.config.rbac.v3.Policy;
import io.envoyproxy.envoy.config.rbac.v3.Principal;
import io.envoyproxy.envoy.config.rbac.v3.RBAC;
import io.meshpilot.api.security.v1beta1.Condition;
import io.meshpilot.api.security.v1beta1.Operation;
import io.meshpilot.api.security.v1beta1.Rule;
import io.meshpilot.api.security.v1beta1.Source;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One AuthorizationPolicy rule as an Envoy RBAC policy, built as istiod's authz/model does:
 * each {@code from} becomes one principal and each {@code to} one permission (an AND of its
 * fields, each field an OR of its values, {@code not*} values a NOT of their OR); the
 * {@code when} conditions are AND-ed into every principal (source keys) or permission
 * (destination and request keys) after the fields. A rule with no {@code from} (or {@code to})
 * has one principal (permission) made of the conditions alone, "any" when there are none.
 * Principals are SPIFFE ids without {@code spiffe://}; the trust domain and its aliases are
 * expanded before matching.
 */
final class RuleModel {
    /** One field or condition of the rule: its key, values and not-values. */
    record Clause(Attribute attribute, String key, List<String> values, List<String> notValues,
                  String policyNamespace) {
        Clause {
            values = List.copyOf(values);
            notValues = List.copyOf(notValues);
        }

        Clause withValues(List<String> v, List<String> nv) {
            return new Clause(attribute, key, v, nv, policyNamespace);
        }
    }

    private final List<List<Clause>> permissions;
    private final List<List<Clause>> principals;

    private RuleModel(List<List<Clause>> permissions, List<List<Clause>> principals) {
        this.permissions = permissions;
        this.principals = principals;
    }

    /** The model of {@code rule} of a policy in {@code namespace}; throws when a condition key is unknown. */
    static RuleModel of(String namespace, Rule rule) throws UnsupportedValue {
        List<Clause> basePermission = new ArrayList<>();
        List<Clause> basePrincipal = new ArrayList<>();
        for (Condition when : rule.getWhenList()) {
            Attribute a = Attribute.ofConditionKey(when.getKey());
            if (a == null) {
                throw new UnsupportedValue("unknown attribute " + when.getKey());
            }
            List<Clause> target = a.isPermission() ? basePermission : basePrincipal;
            add(target, target.size(), a, when.getKey(), when.getValuesList(), when.getNotValuesList(), namespace);
        }
        List<List<Clause>> principals = new ArrayList<>();
        for (Rule.From from : rule.getFromList()) {
            List<Clause> merged = new ArrayList<>(basePrincipal);
            if (from.hasSource()) {
                Source s = from.getSource();
                // inserted at the front one after another: the last inserted comes first, as istiod's insertFront
                add(merged, 0, Attribute.SOURCE_IP, "source.ip", s.getIpBlocksList(), s.getNotIpBlocksList(), namespace);
                add(merged, 0, Attribute.REMOTE_IP, "remote.ip", s.getRemoteIpBlocksList(), s.getNotRemoteIpBlocksList(),
                        namespace);
                add(merged, 0, Attribute.SOURCE_NAMESPACE, "source.namespace", s.getNamespacesList(),
                        s.getNotNamespacesList(), namespace);
                add(merged, 0, Attribute.SOURCE_TRUST_DOMAIN, "source.trustDomain", s.getTrustDomainsList(),
                        s.getNotTrustDomainsList(), namespace);
                add(merged, 0, Attribute.SOURCE_SERVICE_ACCOUNT, "source.serviceAccount", s.getServiceAccountsList(),
                        s.getNotServiceAccountsList(), namespace);
                add(merged, 0, Attribute.REQUEST_PRINCIPAL, "request.auth.principal", s.getRequestPrincipalsList(),
                        s.getNotRequestPrincipalsList(), namespace);
                add(merged, 0, Attribute.SOURCE_PRINCIPAL, "source.principal", s.getPrincipalsList(),
                        s.getNotPrincipalsList(), namespace);
            }
            principals.add(merged);
        }
        if (rule.getFromCount() == 0) {
            principals.add(basePrincipal);
        }
        List<List<Clause>> permissions = new ArrayList<>();
        for (Rule.To to : rule.getToList()) {
            List<Clause> merged = new ArrayList<>(basePermission);
            if (to.hasOperation()) {
                Operation o = to.getOperation();
                add(merged, 0, Attribute.DESTINATION_PORT, "destination.port", o.getPortsList(), o.getNotPortsList(),
                        namespace);
                add(merged, 0, Attribute.PATH, "path-matcher", o.getPathsList(), o.getNotPathsList(), namespace);
                add(merged, 0, Attribute.METHOD, ":method", o.getMethodsList(), o.getNotMethodsList(), namespace);
                add(merged, 0, Attribute.HOST, ":authority", o.getHostsList(), o.getNotHostsList(), namespace);
            }
            permissions.add(merged);
        }
        if (rule.getToCount() == 0) {
            permissions.add(basePermission);
        }
        return new RuleModel(permissions, principals);
    }

    private static void add(List<Clause> list, int at, Attribute a, String key, List<String> values,
                            List<String> notValues, String namespace) {
        if (!values.isEmpty() || !notValues.isEmpty()) {
            list.add(at, new Clause(a, key, values, notValues, namespace));
        }
    }

    /** istiod's MigrateTrustDomain: principals rewritten for every trust domain alias, trust domains expanded. */
    RuleModel withTrustDomains(TrustDomainBundle bundle) {
        if (bundle.trustDomains().size() <= 1 && bundle.trustDomains().contains(TrustDomainBundle.CLUSTER_LOCAL)) {
            return this; // nothing to rewrite: the only trust domain is the one cluster.local points at
        }
        List<List<Clause>> migrated = new ArrayList<>();
        for (List<Clause> p : principals) {
            List<Clause> out = new ArrayList<>();
            for (Clause c : p) {
                if (c.attribute() == Attribute.SOURCE_PRINCIPAL) {
                    out.add(c.withValues(bundle.replaceAliases(c.values()), bundle.replaceAliases(c.notValues())));
                } else if (c.attribute() == Attribute.SOURCE_TRUST_DOMAIN) {
                    out.add(c.withValues(bundle.expandAliases(c.values()), bundle.expandAliases(c.notValues())));
                } else {
                    out.add(c);
                }
            }
            migrated.add(out);
        }
        return new RuleModel(permissions, migrated);
    }

    /**
     * The RBAC policy for a chain (on a TCP chain HTTP attributes cannot match); throws when the rule must be left out (an ALLOW rule needing what the chain lacks).
     */
    Policy generate(Chain chain, RBAC.Action action) throws UnsupportedValue {
        Policy.Builder policy = Policy.newBuilder();
        for (List<Clause> clauses : permissions) {
            List<Permission> and = new ArrayList<>();
            for (Clause c : clauses) {
                and.addAll(permission(c, chain, action));
            }
            policy.addPermissions(RbacRules.permissionAnd(and.isEmpty() ? List.of(RbacRules.PERMISSION_ANY) : and));
        }
        for (List<Clause> clauses : principals) {
            List<Principal> and = new ArrayList<>();
            for (Clause c : clauses) {
                and.addAll(principal(c, chain, action));
            }
            policy.addPrincipals(RbacRules.principalAnd(and.isEmpty() ? List.of(RbacRules.PRINCIPAL_ANY) : and));
        }
        return policy.build();
    }

    /**
     * An ALLOW rule fails as a whole on a value it cannot express (it allows less); DENY and
     * AUDIT rules skip that value and go on (they match more).
     */
    private static void check(RBAC.Action action, UnsupportedValue e) throws UnsupportedValue {
        if (action == RBAC.Action.ALLOW) {
            throw e;
        }
    }

    private static List<Permission> permission(Clause c, Chain chain, RBAC.Action action) throws UnsupportedValue {
        return matchers(c, action, values -> c.attribute().permission(c.key(), values, chain),
                v -> c.attribute().permission(c.key(), v, chain), RbacRules::permissionOr, RbacRules::permissionNot);
    }

    private static List<Principal> principal(Clause c, Chain chain, RBAC.Action action) throws UnsupportedValue {
        return matchers(c, action, values -> c.attribute().principal(c.key(), values, chain),
                v -> c.attribute() == Attribute.SOURCE_SERVICE_ACCOUNT
                        ? Attribute.serviceAccount(c.policyNamespace(), v)
                        : c.attribute().principal(c.key(), v, chain),
                RbacRules::principalOr, RbacRules::principalNot);
    }

    /** One matcher from values, or from one value; may refuse a value it cannot express. */
    @FunctionalInterface
    private interface Translate<V, T> {
        T apply(V values) throws UnsupportedValue;
    }

    /**
     * istiod's generator loop for one clause, the same for permissions and principals: the
     * clause's values become one matcher and its not-values a negated one. An extended
     * attribute (JWT claims, request principals) turns the whole list into one matcher; the
     * others OR one matcher per value. A value that cannot be expressed goes through
     * {@link #check}.
     */
    private static <T> List<T> matchers(Clause c, RBAC.Action action, Translate<List<String>, T> whole,
                                        Translate<String, T> each, Function<List<T>, T> or,
                                        UnaryOperator<T> not) throws UnsupportedValue {
        List<T> out = new ArrayList<>(2);
        for (int pass = 0; pass < 2; pass++) {
            List<String> values = pass == 0 ? c.values() : c.notValues();
            T matcher = null;
            if (c.attribute().extended()) {
                if (values.isEmpty()) {
                    continue;
                }
                try {
                    matcher = whole.apply(values);
                } catch (UnsupportedValue e) {
                    check(action, e);
                }
            } else {
                List<T> any = new ArrayList<>();
                for (String v : values) {
                    try {
                        any.add(each.apply(v));
                    } catch (UnsupportedValue e) {
                        check(action, e);
                    }
                }
                if (!any.isEmpty()) {
                    matcher = or.apply(any);
                }
            }
            if (matcher != null) {
                out.add(pass == 0 ? matcher : not.apply(matcher));
            }
        }
        return out;
    }
}
