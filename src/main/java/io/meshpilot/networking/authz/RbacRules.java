package io.meshpilot.networking.authz;

import io.envoyproxy.envoy.config.rbac.v3.Permission;
import io.envoyproxy.envoy.config.rbac.v3.Principal;
import java.util.List;

/** The RBAC combinators istiod writes: any, and, or, not, for permissions and principals. */
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
}
