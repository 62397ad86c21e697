package io.meshpilot.model;

import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.HTTPMirrorPolicy;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TCPRoute;
import io.meshpilot.api.networking.v1alpha3.TLSRoute;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.config.Config;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Finds conflicting or unsupported config while a PushContext is built and records it in the
 * context's {@link PushDiagnostics}, as istiod records its push-status metrics. Nothing here
 * changes what is pushed: the builders apply what they can (the oldest VirtualService of a
 * host, the first definition of a subset, a route to a subset cluster that does not exist)
 * and these checks say so, in {@code /debug/push_status} and in the metric's gauge.
 *
 * <p>Adding a check is one entry in {@link #CHECKS}: a method taking the PushContext and the
 * builder, calling {@link PushDiagnostics.Builder#add} once per problem. A check that throws
 * is logged and skipped; the push goes on.
 */
public final class ConfigConflicts {
    private static final System.Logger LOG = System.getLogger(ConfigConflicts.class.getName());

    /** One check over a built PushContext. */
    @FunctionalInterface
    public interface Check {
        void run(PushContext push, PushDiagnostics.Builder out);
    }

    /** The checks each push runs, in order. */
    static final List<Check> CHECKS = List.of(
            ConfigConflicts::duplicateHosts,
            ConfigConflicts::duplicateSubsets,
            ConfigConflicts::undefinedSubsets,
            ConfigConflicts::authorizationPolicies,
            ExtensionChecks::run);

    private ConfigConflicts() {
    }

    /** Runs every check on {@code push}. */
    public static PushDiagnostics detect(PushContext push) {
        return detect(push, CHECKS);
    }

    static PushDiagnostics detect(PushContext push, List<Check> checks) {
        PushDiagnostics.Builder out = PushDiagnostics.builder();
        for (Check check : checks) {
            try {
                check.run(push, out);
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "config check " + check + " failed; the push goes on without it", e);
            }
        }
        return out.build();
    }

    /**
     * {@code pilot_vservice_dup_domain}: two VirtualServices bound to {@code mesh} for one
     * host, both visible from some namespace. Sidecars do not merge them (splitting a
     * VirtualService across resources is only supported for gateways): the oldest routes the
     * host, the newer ones are ignored for it. Keyed by host, as istiod keys by domain.
     */
    static void duplicateHosts(PushContext push, PushDiagnostics.Builder out) {
        List<String> meshDefault = push.mesh().getDefaultVirtualServiceExportToList();
        Map<String, List<Config>> byHost = push.virtualServiceIndex().getOrDefault(PushContext.MESH_GATEWAY, Map.of());
        byHost.forEach((host, configs) -> {
            List<Config> oldestFirst = List.copyOf(new LinkedHashSet<>(configs));
            List<String> ignored = new ArrayList<>();
            for (int i = 1; i < oldestFirst.size(); i++) {
                Config newer = oldestFirst.get(i);
                Set<String> seenBy = audience(((VirtualService) newer.spec()).getExportToList(), meshDefault,
                        newer.namespace());
                for (Config older : oldestFirst.subList(0, i)) {
                    if (overlap(seenBy, audience(((VirtualService) older.spec()).getExportToList(), meshDefault,
                            older.namespace()))) {
                        ignored.add(name(newer) + " (" + name(older) + " is older)");
                        break;
                    }
                }
            }
            if (!ignored.isEmpty()) {
                out.add(PushMetric.DUPLICATED_DOMAINS, host, "duplicate domain from virtual service: " + host
                        + ": ignored for sidecars: " + String.join(", ", ignored)
                        + "; only gateways merge VirtualServices of one host");
            }
        });
    }

    /**
     * {@code pilot_destrule_subsets}: DestinationRules of one host in one namespace (which
     * istiod merges) defining the same subset; the oldest definition wins. Keyed by host,
     * with istiod's message.
     */
    static void duplicateSubsets(PushContext push, PushDiagnostics.Builder out) {
        push.destinationRuleIndex().forEach((host, rules) -> {
            Map<String, List<Config>> byNamespace = new LinkedHashMap<>();
            for (Config c : rules) {
                byNamespace.computeIfAbsent(c.namespace(), n -> new ArrayList<>()).add(c);
            }
            for (List<Config> sameNamespace : byNamespace.values()) {
                Map<String, Config> firstDefinition = new HashMap<>();
                for (Config c : new LinkedHashSet<>(sameNamespace)) {
                    for (Subset s : ((DestinationRule) c.spec()).getSubsetsList()) {
                        Config first = firstDefinition.putIfAbsent(s.getName(), c);
                        if (first != null && first != c) {
                            out.add(PushMetric.DUPLICATED_SUBSETS, host, "Duplicate subset " + s.getName()
                                    + " found while merging destination rules for " + host + " (" + name(c)
                                    + " redefines it; " + name(first) + " is older and applies)");
                        }
                    }
                }
            }
        });
    }

    /**
     * {@code pilot_vservice_undefined_subset} (ours): a route, mirror, TCP or TLS destination
     * names a subset that the host's DestinationRule, as seen from the VirtualService's
     * namespace, does not define (or the host has none). The route still goes to
     * {@code outbound|port|subset|host}, which no one builds: Envoy answers 503 (NC) there.
     * Keyed {@code namespace/name|subset|host} of the VirtualService and destination.
     */
    static void undefinedSubsets(PushContext push, PushDiagnostics.Builder out) {
        Set<Config> all = new LinkedHashSet<>();
        push.virtualServiceIndex().values().forEach(byHost -> byHost.values().forEach(all::addAll));
        List<Config> sorted = all.stream().sorted(Comparator.comparing(ConfigConflicts::name)).toList();
        for (Config vs : sorted) {
            Set<Destination> seen = new HashSet<>();
            for (Destination d : destinations((VirtualService) vs.spec())) {
                if (d.getSubset().isEmpty() || !seen.add(d)) {
                    continue;
                }
                String host = PushContext.resolve(d.getHost(), vs.namespace(), push.domainSuffix());
                Optional<Config> rule = push.destinationRule(host, ProxyScope.of(vs.namespace()));
                List<String> defined = rule.map(r -> ((DestinationRule) r.spec()).getSubsetsList().stream()
                        .map(Subset::getName).toList()).orElse(List.of());
                if (defined.contains(d.getSubset())) {
                    continue;
                }
                String why = rule.map(r -> "DestinationRule " + name(r) + " defines only " + defined)
                        .orElse("no DestinationRule for " + host + " is visible from namespace " + vs.namespace());
                out.add(PushMetric.UNDEFINED_SUBSETS, name(vs) + "|" + d.getSubset() + "|" + host,
                        "VirtualService " + name(vs) + " routes to subset " + d.getSubset() + " of " + host + ", but "
                                + why + "; that route goes to a cluster that does not exist (503 NC)");
            }
        }
    }

    /** Every destination of a VirtualService: HTTP routes and mirrors, TLS and TCP routes. */
    private static List<Destination> destinations(VirtualService spec) {
        List<Destination> out = new ArrayList<>();
        for (HTTPRoute h : spec.getHttpList()) {
            for (HTTPRouteDestination r : h.getRouteList()) {
                out.add(r.getDestination());
            }
            if (h.hasMirror()) {
                out.add(h.getMirror());
            }
            for (HTTPMirrorPolicy m : h.getMirrorsList()) {
                out.add(m.getDestination());
            }
        }
        for (TLSRoute t : spec.getTlsList()) {
            for (RouteDestination r : t.getRouteList()) {
                out.add(r.getDestination());
            }
        }
        for (TCPRoute t : spec.getTcpList()) {
            for (RouteDestination r : t.getRouteList()) {
                out.add(r.getDestination());
            }
        }
        return out;
    }

    /**
     * The namespaces that see an object under istiod's exportTo rule ({@link PushContext#exported}):
     * null for every namespace.
     */
    static Set<String> audience(Collection<String> exportTo, Collection<String> meshDefault, String owner) {
        Collection<String> to = exportTo.isEmpty() ? meshDefault : exportTo;
        if (to.isEmpty() || to.contains("*")) {
            return null;
        }
        Set<String> out = new HashSet<>();
        for (String t : to) {
            if (t.equals(".")) {
                out.add(owner);
            } else if (!t.equals("~")) {
                out.add(t);
            }
        }
        return out;
    }

    /** Whether some namespace is in both audiences (null: every namespace). */
    static boolean overlap(Set<String> a, Set<String> b) {
        if (a == null) {
            return b == null || !b.isEmpty();
        }
        if (b == null) {
            return !a.isEmpty();
        }
        return a.stream().anyMatch(b::contains);
    }

    /**
     * {@code pilot_authz_custom_provider_unknown}: CUSTOM policies whose provider is not an
     * ext_authz extension provider of the mesh config; {@code pilot_authz_target_unsupported}:
     * policies whose targetRefs name nothing a served proxy attaches by: a Kubernetes Gateway
     * always, and with waypoints served a Service, a ServiceEntry or the {@code istio-waypoint}
     * GatewayClass ({@link WorkloadPolicyMatcher}).
     */
    static void authorizationPolicies(PushContext push, PushDiagnostics.Builder out) {
        Set<String> extAuthz = new HashSet<>();
        for (var p : push.mesh().getExtensionProvidersList()) {
            if (p.hasEnvoyExtAuthzHttp() || p.hasEnvoyExtAuthzGrpc()) {
                extAuthz.add(p.getName());
            }
        }
        for (Config c : push.authorizationPolicyIndex()) {
            var ap = (AuthorizationPolicy) c.spec();
            if (ap.getAction() == AuthorizationPolicy.Action.CUSTOM
                    && !extAuthz.contains(ap.getProvider().getName())) {
                out.add(PushMetric.AUTHZ_CUSTOM_PROVIDER_UNKNOWN, name(c), "AuthorizationPolicy " + name(c)
                        + ": provider \"" + ap.getProvider().getName() + "\" is not an envoyExtAuthzHttp or "
                        + "envoyExtAuthzGrpc extension provider of the mesh config: the requests it matches are denied");
            }
            for (var ref : WorkloadPolicyMatcher.targetRefs(ap.getTargetRefsList(), ap.getTargetRef(), ap.hasTargetRef())) {
                if (ref.getGroup().equals("gateway.networking.k8s.io") && ref.getKind().equals("Gateway")
                        || push.waypoints() && WorkloadPolicyMatcher.waypointKind(ref)) {
                    continue;
                }
                out.add(PushMetric.AUTHZ_TARGET_UNSUPPORTED, name(c) + "|" + ref.getKind() + "/" + ref.getName(),
                        "AuthorizationPolicy " + name(c) + ": targetRef " + ref.getGroup() + "/" + ref.getKind()
                                + " " + ref.getName() + (WorkloadPolicyMatcher.waypointKind(ref)
                                ? " attaches to waypoints, which are served only with PILOT_ENABLE_AMBIENT"
                                : " is no kind a policy attaches to")
                                + "; the policy applies to no proxy through it");
            }
        }
    }

    private static String name(Config c) {
        return c.namespace() + "/" + c.name();
    }
}
