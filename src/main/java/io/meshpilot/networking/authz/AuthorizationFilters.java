package io.meshpilot.networking.authz;

import com.google.protobuf.Any;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.rbac.v3.Policy;
import io.envoyproxy.envoy.config.rbac.v3.RBAC;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.security.v1beta1.Rule;
import io.meshpilot.config.Config;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.model.WorkloadPolicyMatcher;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * The authorization filters of one proxy's inbound (sidecar) or downstream (gateway) chains,
 * from the AuthorizationPolicies that apply to it, as istiod's authz builder writes them:
 * <ul>
 * <li>{@link #customHttp()} / {@link #customTcp()}: per CUSTOM provider, an RBAC filter whose
 * shadow rules mark the requests the CUSTOM policies match, then the provider's ext_authz
 * filter, enabled only for marked requests; a provider that is unknown or broken gives a DENY
 * RBAC filter for those requests instead; an HTTP provider has nothing on TCP chains;</li>
 * <li>{@link #http()} / {@link #tcp()}: one RBAC filter per action present, AUDIT (action LOG),
 * DENY, then ALLOW. An ALLOW policy without rules denies everything; policies annotated
 * {@code istio.io/dry-run: "true"} become shadow rules (stat prefix
 * {@code istio_dry_run_allow_}/{@code istio_dry_run_deny_}), enforced ones rules;</li>
 * <li>{@link #grpcServer()}: for proxyless gRPC servers, DENY then ALLOW as two RBAC filters
 * (gRPC supports no other action), policies named {@code <ns>-<name>-<rule index>}.</li>
 * </ul>
 * Policy names are {@code ns[<ns>]-policy[<name>]-rule[<i>]}. On TCP chains, an ALLOW rule
 * needing an HTTP attribute is left out; a DENY or AUDIT rule keeps its other matches.
 * istiod's HCM order is CUSTOM, authentication (jwt_authn), then these; the listener builders
 * keep that order. Each list is built on first use and then shared by every chain of the
 * listener build that holds this object (one thread: an instance is not shared across builds).
 */
public final class AuthorizationFilters {
    private static final System.Logger LOG = System.getLogger(AuthorizationFilters.class.getName());
    public static final String HTTP_RBAC = ExtAuthzProviders.HTTP_RBAC;
    public static final String NETWORK_RBAC = ExtAuthzProviders.NETWORK_RBAC;
    public static final String HTTP_EXT_AUTHZ = "envoy.filters.http.ext_authz";
    public static final String NETWORK_EXT_AUTHZ = "envoy.filters.network.ext_authz";
    /** gRPC needs distinct filter names in one HCM: istiod's grpcgen RBACHTTPFilterNameDeny. */
    public static final String GRPC_RBAC_DENY = "envoy.filters.http.rbac.DENY";
    static final String DRY_RUN_ANNOTATION = "istio.io/dry-run";
    static final String DRY_RUN_ALLOW_PREFIX = "istio_dry_run_allow_";
    static final String DRY_RUN_DENY_PREFIX = "istio_dry_run_deny_";
    static final String TCP_STAT_PREFIX = "tcp.";
    static final String BAD_CUSTOM_SUFFIX = "-deny-due-to-bad-CUSTOM-action";
    private static final Policy MATCH_NEVER = Policy.newBuilder()
            .addPermissions(RbacRules.permissionNot(RbacRules.PERMISSION_ANY))
            .addPrincipals(RbacRules.principalNot(RbacRules.PRINCIPAL_ANY)).build();

    private static final AuthorizationFilters NONE = new AuthorizationFilters(SelectedPolicies.NONE, null, null, false);

    private final SelectedPolicies policies;
    private final TrustDomainBundle trustDomains;
    private final PushContext push;
    private final boolean peerFromFilterState;
    private List<HttpFilter> customHttp;
    private List<HttpFilter> http;
    private List<Filter> customTcp;
    private List<Filter> tcp;

    private AuthorizationFilters(SelectedPolicies policies, TrustDomainBundle trustDomains, PushContext push,
                                 boolean peerFromFilterState) {
        this.policies = policies;
        this.trustDomains = trustDomains;
        this.push = push;
        this.peerFromFilterState = peerFromFilterState;
    }

    /** The filters for {@code proxy}; cheap when no policy applies to it. */
    public static AuthorizationFilters forProxy(Proxy proxy, PushContext push) {
        return of(SelectedPolicies.forProxy(proxy, push), push, false);
    }

    /**
     * The filters of a waypoint's chain for {@code service} (null: the chains for traffic
     * addressed to a workload), as istiod's authz.NewBuilderForService with useFilterState: the
     * policies targeting the waypoint, its class or that service, with source identities read
     * from the HBONE peer in filter state.
     */
    public static AuthorizationFilters forWaypoint(Proxy waypoint, PushContext push, Service service) {
        return of(SelectedPolicies.matching(WorkloadPolicyMatcher.forProxy(waypoint, push.rootNamespace())
                .withService(service), push), push, true);
    }

    private static AuthorizationFilters of(SelectedPolicies selected, PushContext push, boolean peerFromFilterState) {
        if (selected.isEmpty()) {
            return NONE;
        }
        return new AuthorizationFilters(selected, TrustDomainBundle.of(push.mesh()), push, peerFromFilterState);
    }

    /** Whether no AuthorizationPolicy applies to the proxy. */
    public boolean isEmpty() {
        return policies.isEmpty();
    }

    /** The CUSTOM action's filters for an HTTP connection manager (before authentication). */
    public List<HttpFilter> customHttp() {
        if (customHttp == null) {
            customHttp = policies.custom().isEmpty() ? List.of() : buildCustom(false).http();
        }
        return customHttp;
    }

    /** The AUDIT, DENY and ALLOW RBAC filters for an HTTP connection manager (after authentication). */
    public List<HttpFilter> http() {
        if (http == null) {
            List<HttpFilter> out = new ArrayList<>();
            addLocal(out, policies.audit(), RBAC.Action.LOG, false);
            addLocal(out, policies.deny(), RBAC.Action.DENY, false);
            addLocal(out, policies.allow(), RBAC.Action.ALLOW, false);
            http = List.copyOf(out);
        }
        return http;
    }

    /** The CUSTOM action's network filters for a TCP chain (gRPC providers only). */
    public List<Filter> customTcp() {
        if (customTcp == null) {
            customTcp = policies.custom().isEmpty() ? List.of() : buildCustom(true).tcp();
        }
        return customTcp;
    }

    /** The AUDIT, DENY and ALLOW network RBAC filters for a TCP chain (before tcp_proxy). */
    public List<Filter> tcp() {
        if (tcp == null) {
            List<Filter> out = new ArrayList<>();
            addLocalTcp(out, policies.audit(), RBAC.Action.LOG);
            addLocalTcp(out, policies.deny(), RBAC.Action.DENY);
            addLocalTcp(out, policies.allow(), RBAC.Action.ALLOW);
            tcp = List.copyOf(out);
        }
        return tcp;
    }

    /**
     * The RBAC filters of a proxyless gRPC server's inbound listener (istiod's grpcgen
     * buildRBAC): DENY then ALLOW; no dry run, AUDIT or CUSTOM, which gRPC does not support.
     * Unlike istiod's gRPC generator, which writes no entry for a policy without rules and no
     * ALLOW filter when no ALLOW rule could be generated (so such a server allows everything),
     * an ALLOW policy here always yields the ALLOW filter and a rule-less policy istiod's
     * never-matching entry: "an ALLOW policy with no rules denies all", as on Envoy.
     */
    public List<HttpFilter> grpcServer() {
        List<HttpFilter> out = new ArrayList<>(2);
        RBAC deny = grpcRules(RBAC.Action.DENY, policies.deny());
        if (deny.getPoliciesCount() > 0) {
            out.add(httpFilter(GRPC_RBAC_DENY, io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.newBuilder()
                    .setRules(deny).build()));
        }
        RBAC allow = grpcRules(RBAC.Action.ALLOW, policies.allow());
        if (!policies.allow().isEmpty()) {
            out.add(httpFilter(HTTP_RBAC, io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.newBuilder()
                    .setRules(allow).build()));
        }
        return out;
    }

    private RBAC grpcRules(RBAC.Action action, List<Config> configs) {
        RBAC.Builder rules = RBAC.newBuilder().setAction(action);
        for (Config c : configs) {
            List<Rule> list = ((AuthorizationPolicy) c.spec()).getRulesList();
            if (list.isEmpty()) {
                rules.putPolicies(c.namespace() + "-" + c.name() + "-0", MATCH_NEVER);
            }
            for (int i = 0; i < list.size(); i++) {
                try {
                    rules.putPolicies(c.namespace() + "-" + c.name() + "-" + i,
                            RuleModel.of(c.namespace(), list.get(i)).generate(Chain.GRPC, action));
                } catch (UnsupportedValue e) {
                    LOG.log(Level.WARNING, "AuthorizationPolicy " + c.namespace() + "/" + c.name() + " rule " + i
                            + " skipped for gRPC: " + e.getMessage());
                }
            }
        }
        return rules.build();
    }

    /** Enforced and dry-run rules of one action; null parts when no policy of that kind. */
    private record Built(RBAC rules, RBAC shadowRules) {
    }

    private Built build(List<Config> configs, RBAC.Action action, boolean forTcp, String provider,
                        Map<String, RBAC.Builder[]> byProvider) {
        RBAC.Builder enforce = RBAC.newBuilder().setAction(action);
        RBAC.Builder shadow = RBAC.newBuilder().setAction(action);
        boolean hasEnforce = false;
        boolean hasDryRun = false;
        for (Config c : configs) {
            AuthorizationPolicy ap = (AuthorizationPolicy) c.spec();
            String providerName = provider == null ? null : ap.getProvider().getName();
            RBAC.Builder current;
            boolean dryRun = dryRun(c);
            if (byProvider != null) {
                RBAC.Builder[] pair = byProvider.computeIfAbsent(providerName, p -> new RBAC.Builder[] {
                        RBAC.newBuilder().setAction(action), RBAC.newBuilder().setAction(action)});
                current = dryRun ? pair[1] : pair[0];
            } else {
                current = dryRun ? shadow : enforce;
            }
            hasDryRun |= dryRun;
            hasEnforce |= !dryRun;
            for (int i = 0; i < ap.getRulesCount(); i++) {
                String name = policyName(c, i, providerName);
                try {
                    RuleModel m = RuleModel.of(c.namespace(), ap.getRules(i)).withTrustDomains(trustDomains);
                    Policy generated = m.generate(forTcp ? Chain.TCP : Chain.HTTP, action);
                    current.putPolicies(name, peerFromFilterState ? RbacRules.peerFromFilterState(generated) : generated);
                } catch (UnsupportedValue e) {
                    LOG.log(forTcp ? Level.DEBUG : Level.WARNING, "skipped rule " + name + " on "
                            + (forTcp ? "TCP" : "HTTP") + " filter chain: " + e.getMessage());
                }
            }
            if (ap.getRulesCount() == 0) {
                current.putPolicies(policyName(c, 0, providerName), MATCH_NEVER);
            }
        }
        return new Built(hasEnforce ? enforce.build() : null, hasDryRun ? shadow.build() : null);
    }

    private static String policyName(Config c, int rule, String provider) {
        String prefix = provider == null ? ""
                : provider.isEmpty() ? ExtAuthzProviders.MATCH_PREFIX + "-"
                : ExtAuthzProviders.MATCH_PREFIX + "-" + provider + "-";
        return prefix + "ns[" + c.namespace() + "]-policy[" + c.name() + "]-rule[" + rule + "]";
    }

    /**
     * Go's strconv.ParseBool of the dry-run annotation; an unparsable value means false (istiod
     * reads it so for sidecars and for ztunnel alike).
     */
    public static boolean dryRun(Config c) {
        String v = c.annotations().get(DRY_RUN_ANNOTATION);
        if (v == null) {
            return false;
        }
        return switch (v) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            case "0", "f", "F", "FALSE", "false", "False" -> false;
            default -> {
                LOG.log(Level.WARNING, "failed to parse the value of " + DRY_RUN_ANNOTATION + " on "
                        + c.namespace() + "/" + c.name() + ": \"" + v + "\"");
                yield false;
            }
        };
    }

    /**
     * istiod's shadowRuleStatPrefix: by the dry-run rules' action; with no dry-run rules Go reads
     * the action of a nil message, ALLOW, so such filters carry the ALLOW prefix.
     */
    private static String shadowStatPrefix(RBAC shadow) {
        if (shadow == null) {
            return DRY_RUN_ALLOW_PREFIX;
        }
        return switch (shadow.getAction()) {
            case ALLOW -> DRY_RUN_ALLOW_PREFIX;
            case DENY -> DRY_RUN_DENY_PREFIX;
            default -> "";
        };
    }

    private void addLocal(List<HttpFilter> out, List<Config> configs, RBAC.Action action, boolean forTcp) {
        if (configs.isEmpty()) {
            return;
        }
        Built b = build(configs, action, forTcp, null, null);
        var rbac = io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.newBuilder()
                .setShadowRulesStatPrefix(shadowStatPrefix(b.shadowRules()));
        if (b.rules() != null) {
            rbac.setRules(b.rules());
        }
        if (b.shadowRules() != null) {
            rbac.setShadowRules(b.shadowRules());
        }
        out.add(httpFilter(HTTP_RBAC, rbac.build()));
    }

    private void addLocalTcp(List<Filter> out, List<Config> configs, RBAC.Action action) {
        if (configs.isEmpty()) {
            return;
        }
        Built b = build(configs, action, true, null, null);
        var rbac = io.envoyproxy.envoy.extensions.filters.network.rbac.v3.RBAC.newBuilder()
                .setStatPrefix(TCP_STAT_PREFIX).setShadowRulesStatPrefix(shadowStatPrefix(b.shadowRules()));
        if (b.rules() != null) {
            rbac.setRules(b.rules());
        }
        if (b.shadowRules() != null) {
            rbac.setShadowRules(b.shadowRules());
        }
        out.add(networkFilter(NETWORK_RBAC, rbac.build()));
    }

    /** The CUSTOM filters of both kinds, for one chain kind. */
    private record CustomFilters(List<HttpFilter> http, List<Filter> tcp) {
    }

    private CustomFilters buildCustom(boolean forTcp) {
        Map<String, RBAC.Builder[]> byProvider = new LinkedHashMap<>();
        build(policies.custom(), RBAC.Action.DENY, forTcp, "", byProvider);
        ExtAuthzProviders providers = ExtAuthzProviders.of(push);
        List<String> names = new ArrayList<>(new TreeSet<>(byProvider.keySet()));
        List<HttpFilter> http = new ArrayList<>();
        List<Filter> tcp = new ArrayList<>();
        if (names.size() > 1) {
            // istiod without PILOT_ENABLE_MULTIPLE_CUSTOM_AUTHZ_PROVIDERS: no provider is picked, all CUSTOM rules deny
            LOG.log(Level.WARNING, "multiple CUSTOM authorization providers per workload are not supported, found "
                    + names + ": the requests they match are denied");
            for (String name : names) {
                addBadCustom(http, tcp, byProvider.get(name)[0].build(), forTcp);
            }
            return new CustomFilters(List.copyOf(http), List.copyOf(tcp));
        }
        for (String name : names) {
            RBAC enforce = byProvider.get(name)[0].build();
            RBAC dryRun = byProvider.get(name)[1].build();
            ExtAuthzProviders.Provider provider;
            try {
                provider = providers.get(name);
            } catch (UnsupportedValue e) {
                LOG.log(Level.WARNING, "failed to process CUSTOM action for provider " + name
                        + ", will generate deny configs: " + e.getMessage());
                addBadCustom(http, tcp, enforce, forTcp);
                continue;
            }
            var matcher = ExtAuthzProviders.filterEnabled(forTcp ? NETWORK_RBAC : HTTP_RBAC,
                    ExtAuthzProviders.MATCH_PREFIX + "-" + name);
            if (forTcp) {
                if (provider.tcp() == null) {
                    continue; // an HTTP provider cannot check TCP connections
                }
                var rbac = io.envoyproxy.envoy.extensions.filters.network.rbac.v3.RBAC.newBuilder()
                        .setShadowRules(enforce).setStatPrefix(TCP_STAT_PREFIX)
                        .setShadowRulesStatPrefix(ExtAuthzProviders.EXT_AUTHZ_SHADOW_PREFIX);
                if (dryRun.getPoliciesCount() > 0) {
                    rbac.setRules(dryRun);
                }
                tcp.add(networkFilter(NETWORK_RBAC, rbac.build()));
                tcp.add(networkFilter(NETWORK_EXT_AUTHZ, provider.tcp().toBuilder().setFilterEnabledMetadata(matcher)
                        .build()));
            } else {
                var rbac = io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.newBuilder()
                        .setShadowRules(enforce).setShadowRulesStatPrefix(ExtAuthzProviders.EXT_AUTHZ_SHADOW_PREFIX);
                if (dryRun.getPoliciesCount() > 0) {
                    rbac.setRules(dryRun);
                }
                http.add(httpFilter(HTTP_RBAC, rbac.build()));
                http.add(httpFilter(HTTP_EXT_AUTHZ, provider.http().toBuilder().setFilterEnabledMetadata(matcher)
                        .build()));
            }
        }
        return new CustomFilters(List.copyOf(http), List.copyOf(tcp));
    }

    /** istiod's getBadCustomDenyRules: the provider's rules, renamed, as DENY rules. */
    private static void addBadCustom(List<HttpFilter> http, List<Filter> tcp, RBAC enforce, boolean forTcp) {
        RBAC.Builder deny = RBAC.newBuilder().setAction(RBAC.Action.DENY);
        enforce.getPoliciesMap().forEach((k, v) -> deny.putPolicies(k + BAD_CUSTOM_SUFFIX, v));
        if (forTcp) {
            tcp.add(networkFilter(NETWORK_RBAC, io.envoyproxy.envoy.extensions.filters.network.rbac.v3.RBAC.newBuilder()
                    .setRules(deny).setStatPrefix(TCP_STAT_PREFIX).build()));
        } else {
            http.add(httpFilter(HTTP_RBAC, io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.newBuilder()
                    .setRules(deny).build()));
        }
    }

    private static HttpFilter httpFilter(String name, Message config) {
        return HttpFilter.newBuilder().setName(name).setTypedConfig(Any.pack(config)).build();
    }

    private static Filter networkFilter(String name, Message config) {
        return Filter.newBuilder().setName(name).setTypedConfig(Any.pack(config)).build();
    }
}
