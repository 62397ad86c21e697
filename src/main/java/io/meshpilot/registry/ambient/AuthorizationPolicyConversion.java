package io.meshpilot.registry.ambient;

import com.google.protobuf.ByteString;
import com.google.protobuf.Empty;
import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.security.v1beta1.Condition;
import io.meshpilot.api.security.v1beta1.Operation;
import io.meshpilot.api.security.v1beta1.Rule;
import io.meshpilot.api.security.v1beta1.Source;
import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Address;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Group;
import io.meshpilot.api.workload.security.Match;
import io.meshpilot.api.workload.security.Rules;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.api.workload.security.ServiceAccountMatch;
import io.meshpilot.api.workload.security.StringMatch;
import io.meshpilot.config.Config;
import io.meshpilot.networking.authz.AuthorizationFilters;
import io.meshpilot.util.IpPrefix;
import io.meshpilot.util.IpSyntaxException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * An AuthorizationPolicy as ztunnel enforces it: istiod's {@code convertAuthorizationPolicy}
 * (pilot/pkg/serviceregistry/ambient/authorization.go). ztunnel sees connections, not requests,
 * so HTTP attributes cannot apply there: a rule naming one is left out of an ALLOW policy (it
 * can never match, which allows less than asked) and a DENY rule keeps only its L4 parts (which
 * denies more than asked); either way the policy is reported with istiod's message. A policy
 * with {@code targetRef(s)} belongs to a waypoint, not to ztunnel.
 */
public final class AuthorizationPolicyConversion {
    /** The {@code when} keys ztunnel can evaluate (istiod's l4WhenAttributes). */
    private static final Set<String> L4_WHEN_KEYS = Set.of("source.ip", "source.namespace", "source.principal",
            "destination.ip", "destination.port");
    private static final StringMatch PRESENCE = StringMatch.newBuilder().setPresence(Empty.getDefaultInstance()).build();

    private static final String HTTP_RULE = "ztunnel does not support HTTP attributes (found: %s). "
            + "In ambient mode you must use a waypoint proxy to enforce HTTP rules. %s";
    private static final String HTTP_DENY_NO_EFFECT = "After omitting unsupported HTTP attributes, this DENY policy "
            + "has no enforceable rules at ztunnel and will have no effect. Deploy a waypoint proxy and use a targetRef "
            + "to enforce this policy.";
    private static final String HTTP_DENY_MIXED = "DENY policy with HTTP attributes is enforced without the HTTP "
            + "rules. This will be more restrictive than requested.";
    private static final String HTTP_ALLOW = "Within an ALLOW policy, rules matching HTTP attributes are omitted. "
            + "This will be more restrictive than requested.";

    private AuthorizationPolicyConversion() {
    }

    /**
     * What ztunnel gets for one AuthorizationPolicy.
     *
     * @param authorization what is sent; null when the policy cannot be sent at all (an AUDIT or
     *                      CUSTOM action, dry run while AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY is off)
     * @param unsupported   istiod's UnsupportedValue message when the policy is not applied as
     *                      written; null when it is
     */
    public record Converted(Authorization authorization, String unsupported) {
    }

    /**
     * istiod's convertAuthorizationPolicy; null for a policy that is not ztunnel's (it has
     * targetRefs: a waypoint enforces it).
     *
     * @param dryRunEnabled AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY
     */
    public static Converted convert(Config policy, String rootNamespace, boolean dryRunEnabled) {
        AuthorizationPolicy spec = (AuthorizationPolicy) policy.spec();
        boolean dryRun = AuthorizationFilters.dryRun(policy);
        if (dryRun && !dryRunEnabled) {
            return new Converted(null, "found policy \"" + policy.namespace() + "/" + policy.name()
                    + "\" using dry-run annotation, but support for ambient dry-run authorizationPolicies isn't enabled");
        }
        if (spec.getTargetRefsCount() > 0 || spec.hasTargetRef()) {
            return null;
        }
        Scope scope = spec.hasSelector() ? Scope.WORKLOAD_SELECTOR
                : policy.namespace().equals(rootNamespace) ? Scope.GLOBAL : Scope.NAMESPACE;
        Action action = switch (spec.getAction()) {
            case ALLOW -> Action.ALLOW;
            case DENY -> Action.DENY;
            default -> null;
        };
        if (action == null) {
            return new Converted(null, "ztunnel does not support the " + spec.getAction() + " action");
        }
        Authorization.Builder out = Authorization.newBuilder().setName(policy.name())
                .setNamespace(policy.namespace()).setScope(scope).setAction(action).setDryRun(dryRun);
        Set<String> httpAttributes = new TreeSet<>();
        for (Rule rule : spec.getRulesList()) {
            List<Rules> rules = rule(action, rule, policy.namespace(), httpAttributes);
            if (rules != null) {
                out.addGroups(Group.newBuilder().addAllRules(rules));
            }
        }
        if (httpAttributes.isEmpty()) {
            return new Converted(out.build(), null);
        }
        String consequence = action == Action.ALLOW ? HTTP_ALLOW
                : hasEffectiveRules(out.getGroupsList()) ? HTTP_DENY_MIXED : HTTP_DENY_NO_EFFECT;
        return new Converted(out.build(), HTTP_RULE.formatted(String.join(", ", httpAttributes), consequence));
    }

    /**
     * istiod's handleRule: the rule's {@code to}, {@code from} and each {@code when} become one
     * clause each (clauses are ANDed, the matches of a clause ORed). Null when an ALLOW rule
     * names an HTTP attribute: it can never match at ztunnel.
     */
    private static List<Rules> rule(Action action, Rule rule, String namespace, Set<String> httpAttributes) {
        boolean http = false;
        List<Rules> rules = new ArrayList<>();
        Rules.Builder to = Rules.newBuilder();
        for (Rule.To t : rule.getToList()) {
            Operation op = t.getOperation();
            http |= noted(httpFields(op), httpAttributes);
            to.addMatches(Match.newBuilder().addAllDestinationPorts(ports(op.getPortsList()))
                    .addAllNotDestinationPorts(ports(op.getNotPortsList())));
        }
        Rules.Builder from = Rules.newBuilder();
        for (Rule.From f : rule.getFromList()) {
            Source s = f.getSource();
            http |= noted(httpFields(s), httpAttributes);
            from.addMatches(Match.newBuilder()
                    .addAllSourceIps(addresses(s.getIpBlocksList()))
                    .addAllNotSourceIps(addresses(s.getNotIpBlocksList()))
                    .addAllNamespaces(strings(s.getNamespacesList()))
                    .addAllNotNamespaces(strings(s.getNotNamespacesList()))
                    .addAllServiceAccounts(serviceAccounts(s.getServiceAccountsList(), namespace))
                    .addAllNotServiceAccounts(serviceAccounts(s.getNotServiceAccountsList(), namespace))
                    .addAllPrincipals(strings(s.getPrincipalsList()))
                    .addAllNotPrincipals(strings(s.getNotPrincipalsList())));
        }
        if (to.getMatchesCount() > 0) {
            rules.add(to.build());
        }
        if (from.getMatchesCount() > 0) {
            rules.add(from.build());
        }
        for (Condition when : rule.getWhenList()) {
            if (!L4_WHEN_KEYS.contains(when.getKey())) {
                http = true;
                httpAttributes.add(when.getKey());
            }
            rules.add(Rules.newBuilder().addMatches(when(when)).build());
        }
        // an ALLOW rule with HTTP attributes never matches; a DENY keeps its (possibly empty) matches,
        // which ztunnel skips
        return action == Action.ALLOW && http ? null : rules;
    }

    /** One {@code when} condition as a match; an HTTP key gives the empty match ztunnel skips. */
    private static Match when(Condition when) {
        Match.Builder m = Match.newBuilder();
        switch (when.getKey()) {
            case "source.namespace" -> m.addAllNamespaces(strings(when.getValuesList()))
                    .addAllNotNamespaces(strings(when.getNotValuesList()));
            case "source.principal" -> m.addAllPrincipals(strings(when.getValuesList()))
                    .addAllNotPrincipals(strings(when.getNotValuesList()));
            case "source.ip" -> m.addAllSourceIps(addresses(when.getValuesList()))
                    .addAllNotSourceIps(addresses(when.getNotValuesList()));
            case "destination.port" -> m.addAllDestinationPorts(ports(when.getValuesList()))
                    .addAllNotDestinationPorts(ports(when.getNotValuesList()));
            case "destination.ip" -> m.addAllDestinationIps(addresses(when.getValuesList()))
                    .addAllNotDestinationIps(addresses(when.getNotValuesList()));
            default -> {
            }
        }
        return m.build();
    }

    /** istiod's httpOperations: the HTTP fields an operation sets. */
    private static List<String> httpFields(Operation op) {
        List<String> out = new ArrayList<>();
        addIf(out, "hosts", op.getHostsCount());
        addIf(out, "notHosts", op.getNotHostsCount());
        addIf(out, "methods", op.getMethodsCount());
        addIf(out, "notMethods", op.getNotMethodsCount());
        addIf(out, "paths", op.getPathsCount());
        addIf(out, "notPaths", op.getNotPathsCount());
        return out;
    }

    /** istiod's httpSources: the request-level fields a source sets. */
    private static List<String> httpFields(Source s) {
        List<String> out = new ArrayList<>();
        addIf(out, "remoteIpBlocks", s.getRemoteIpBlocksCount());
        addIf(out, "notRemoteIpBlocks", s.getNotRemoteIpBlocksCount());
        addIf(out, "requestPrincipals", s.getRequestPrincipalsCount());
        addIf(out, "notRequestPrincipals", s.getNotRequestPrincipalsCount());
        return out;
    }

    /** Adds {@code fields} to {@code into}; whether there were any. */
    private static boolean noted(List<String> fields, Set<String> into) {
        into.addAll(fields);
        return !fields.isEmpty();
    }

    private static void addIf(List<String> out, String field, int count) {
        if (count > 0) {
            out.add(field);
        }
    }

    /**
     * istiod's hasEffectiveRules: whether some group can fire at ztunnel. A group without rules
     * matches everything; a clause whose matches are all empty never matches.
     */
    private static boolean hasEffectiveRules(List<Group> groups) {
        for (Group g : groups) {
            if (g.getRulesList().stream().allMatch(r -> r.getMatchesList().stream()
                    .anyMatch(m -> !m.equals(Match.getDefaultInstance())))) {
                return true;
            }
        }
        return false;
    }

    /** istiod's stringToMatch: {@code *} any value present, {@code *x} a suffix, {@code x*} a prefix, else exact. */
    static List<StringMatch> strings(List<String> values) {
        return map(values, v -> {
            if (v.equals("*")) {
                return PRESENCE;
            }
            if (v.startsWith("*")) {
                return StringMatch.newBuilder().setSuffix(v.substring(1)).build();
            }
            if (v.endsWith("*")) {
                return StringMatch.newBuilder().setPrefix(v.substring(0, v.length() - 1)).build();
            }
            return StringMatch.newBuilder().setExact(v).build();
        });
    }

    /** istiod's stringToServiceAccountMatch: {@code ns/sa}, or {@code sa} of the policy's namespace. */
    private static List<ServiceAccountMatch> serviceAccounts(List<String> values, String namespace) {
        return map(values, v -> {
            int slash = v.indexOf('/');
            return slash >= 0
                    ? ServiceAccountMatch.newBuilder().setNamespace(v.substring(0, slash))
                    .setServiceAccount(v.substring(slash + 1)).build()
                    : ServiceAccountMatch.newBuilder().setNamespace(namespace).setServiceAccount(v).build();
        });
    }

    /** istiod's stringToPort: decimal ports up to 65535; anything else (a port name) is left out. */
    private static List<Integer> ports(List<String> values) {
        List<Integer> out = new ArrayList<>();
        for (String v : values) {
            if (!v.isEmpty() && v.length() <= 5 && v.chars().allMatch(c -> c >= '0' && c <= '9')
                    && Integer.parseInt(v) <= 65535) {
                out.add(Integer.parseInt(v));
            }
        }
        return out;
    }

    /** istiod's stringToIP: addresses (full length) and CIDR prefixes; anything unparsable is left out. */
    private static List<Address> addresses(List<String> values) {
        List<Address> out = new ArrayList<>();
        for (String v : values) {
            if (v.isEmpty()) {
                continue;
            }
            try {
                IpPrefix p = IpPrefix.parseAddressOrPrefix(v);
                out.add(Address.newBuilder().setAddress(ByteString.copyFrom(p.addr().bytes())).setLength(p.bits())
                        .build());
            } catch (IpSyntaxException e) {
                // left out, as istiod: validation has already refused such values in new config
            }
        }
        return out;
    }

    private static <T> List<T> map(List<String> values, Function<String, T> f) {
        return values.stream().map(f).toList();
    }
}
