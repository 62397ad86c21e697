package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.AmbientIndexes;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.registry.ambient.ZtunnelPolicies;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Supplier;

/**
 * ztunnel's {@code istio.security.Authorization} type (istiod's WorkloadRBACGenerator,
 * pilot/pkg/xds/workload.go): every AuthorizationPolicy and PeerAuthentication as ztunnel
 * enforces it ({@link ZtunnelPolicies}) and the ambient index's implicit waypoint policies, to a
 * wildcard subscription, or the names subscribed.
 * Delta streams get only what changed and the names of what is gone (the ADS protocol compares
 * each resource's version with what the stream holds). Nothing without PILOT_ENABLE_AMBIENT, as
 * istiod's empty ambient index. The conversion runs once per PushContext, not per ztunnel; what
 * ztunnel does not get as written is logged once when it first appears and listed in push
 * status ({@link PushMetric#AUTHZ_ZTUNNEL_UNAPPLIED}).
 */
final class WorkloadRbacGenerator implements Generator {
    private static final System.Logger LOG = System.getLogger(WorkloadRbacGenerator.class.getName());

    /** The conversion of one PushContext (by its version: holding the push would keep it alive), as packed resources. */
    private record Converted(long version, ZtunnelPolicies policies, List<Any> resources) {
    }

    private final boolean enabled;
    private final boolean dryRunEnabled;
    private final Supplier<AmbientIndexes> indexes;
    private volatile Converted last;

    /**
     * @param enabled       PILOT_ENABLE_AMBIENT
     * @param dryRunEnabled AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY
     * @param indexes       the ambient index, whose implicit waypoint policies are sent with the converted ones
     */
    WorkloadRbacGenerator(boolean enabled, boolean dryRunEnabled, Supplier<AmbientIndexes> indexes) {
        this.enabled = enabled;
        this.dryRunEnabled = dryRunEnabled;
        this.indexes = indexes;
    }

    /**
     * Whether a full push changes ztunnel's policies: when no change is named (a forced push, a
     * mesh config change) or an AuthorizationPolicy or PeerAuthentication changed (istiod pushes
     * this type for a forced request or changed AuthorizationPolicies, which its ambient store
     * also reports for PeerAuthentications).
     */
    static boolean needsPush(Set<ConfigKey> changed) {
        return changed.isEmpty() || changed.stream().anyMatch(k -> k.kind().equals("AuthorizationPolicy")
                || k.kind().equals("PeerAuthentication"));
    }

    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        if (!enabled) {
            return List.of();
        }
        List<Any> all = converted(push).resources();
        var implicit = indexes.get().waypointPolicies();
        if (!implicit.isEmpty()) {
            List<Any> withImplicit = new ArrayList<>(all);
            implicit.values().forEach(a -> withImplicit.add(Any.pack(a)));
            all = withImplicit;
        }
        if (wildcard) {
            return all;
        }
        return all.stream().filter(a -> names.contains(ResourceNames.of(a))).toList();
    }

    /** The policies of {@code push}, converted by the first ztunnel push that reads it. */
    private Converted converted(PushContext push) {
        Converted c = last;
        if (c != null && c.version() == push.version()) {
            return c;
        }
        synchronized (this) {
            c = last;
            if (c != null && c.version() == push.version()) {
                return c;
            }
            ZtunnelPolicies policies = ZtunnelPolicies.convert(push.rootNamespace(), push.authorizationPolicyIndex(),
                    push.peerAuthentications(), dryRunEnabled);
            Map<String, String> before = c == null ? Map.of() : c.policies().unapplied();
            policies.unapplied().forEach((key, why) -> {
                push.addMetric(PushMetric.AUTHZ_ZTUNNEL_UNAPPLIED, key, "", why);
                if (!Objects.equals(before.get(key), why)) {
                    LOG.log(Level.WARNING, "ztunnel authorization policy=" + key + " not applied as written: " + why);
                }
            });
            List<Any> resources = policies.authorizations().values().stream().map(Any::pack).toList();
            Converted fresh = new Converted(push.version(), policies, resources);
            last = fresh;
            return fresh;
        }
    }
}
