package io.meshpilot.networking.authz;

import io.envoyproxy.envoy.config.rbac.v3.Permission;
import io.envoyproxy.envoy.config.rbac.v3.Policy;
import io.envoyproxy.envoy.config.rbac.v3.Principal;
import io.envoyproxy.envoy.type.matcher.v3.FilterStateMatcher;
import java.util.List;

/**
 * The RBAC combinators istiod writes: any, and, or, not, for permissions and principals; and the
 * waypoint's form of a peer identity.
 */
final class RbacRules {
    static final Permission PERMISSION_ANY = Permission.newBuilder().setAny(true).build();
    static final Principal PRINCIPAL_ANY = Principal.newBuilder().setAny(true).build();

    private RbacRules() {
    }

    static Permission permissionAnd(List<Permission> rules) {
        return Permission.newBuilder().setAndRules(Permission.Set.newBuilder().addAllRules(rules)).build();
    }

    static Permission permissionOr(List<Permission> rules) {
        return Permission.newBuilder().setOrRules(Permission.Set.newBuilder().addAllRules(rules)).build();
    }

    static Permission permissionNot(Permission rule) {
        return Permission.newBuilder().setNotRule(rule).build();
    }

    static Principal principalAnd(List<Principal> ids) {
        return Principal.newBuilder().setAndIds(Principal.Set.newBuilder().addAllIds(ids)).build();
    }

    static Principal principalOr(List<Principal> ids) {
        return Principal.newBuilder().setOrIds(Principal.Set.newBuilder().addAllIds(ids)).build();
    }

    static Principal principalNot(Principal id) {
        return Principal.newBuilder().setNotId(id).build();
    }

    /**
     * Filter state key where a waypoint keeps the HBONE peer's identity: its RBAC runs on
     * {@code main_internal}, whose connection's TLS peer is the waypoint itself (istiod's
     * principalAuthenticated with useAuthenticated false).
     */
    static final String PEER_PRINCIPAL_FILTER_STATE = "io.istio.peer_principal";

    /** {@code policy} with every match on the authenticated TLS peer turned into one on the HBONE peer in filter state. */
    static Policy peerFromFilterState(Policy policy) {
        Policy.Builder out = policy.toBuilder().clearPrincipals();
        policy.getPrincipalsList().forEach(p -> out.addPrincipals(peerFromFilterState(p)));
        return out.build();
    }

    private static Principal peerFromFilterState(Principal p) {
        return switch (p.getIdentifierCase()) {
            case AUTHENTICATED -> Principal.newBuilder().setFilterState(FilterStateMatcher.newBuilder()
                    .setKey(PEER_PRINCIPAL_FILTER_STATE).setStringMatch(p.getAuthenticated().getPrincipalName())).build();
            case AND_IDS -> principalAnd(p.getAndIds().getIdsList().stream().map(RbacRules::peerFromFilterState).toList());
            case OR_IDS -> principalOr(p.getOrIds().getIdsList().stream().map(RbacRules::peerFromFilterState).toList());
            case NOT_ID -> principalNot(peerFromFilterState(p.getNotId()));
            default -> p;
        };
    }
}
