package io.meshpilot.registry;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ShardKey;
import java.util.List;
import java.util.Set;

/**
 * Where registries report changes (istiod's XDSUpdater, implemented by the DiscoveryServer).
 * Endpoint-only changes become incremental EDS pushes; service changes full pushes.
 */
public interface RegistryUpdates {
    /** New endpoints of one service in one shard; pushes as the endpoint index decides. */
    void edsUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints);

    /** Records endpoints without a push of their own: a service change follows and pushes fully. */
    void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints);

    /** A service was added, changed or deleted: a full push. */
    void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted);

    /**
     * A registry's east-west gateways changed (istiod's gateway handler): every proxy's EDS may
     * route through other gateways now, a full push.
     */
    void networkGatewaysUpdate();

    /**
     * ztunnel Address resources changed (workload uids, service {@code namespace/hostname}s):
     * pushed to ztunnels only, not full (istiod's AmbientUpdate with AddressesUpdated); and the
     * waypoints whose workloads they changed (before or after, as the workloads' {@code waypoint}
     * names them), whose proxies' listeners match those workloads (istiod's WaypointsUpdated).
     */
    void addressesUpdate(Set<String> keys, Set<String> waypoints);

    /**
     * The ambient index's own ztunnel Authorizations changed (the implicit waypoint policies,
     * {@code namespace/name}): ztunnels get the Authorization type again (istiod's ConfigUpdate
     * naming them as AuthorizationPolicies).
     */
    void ambientPoliciesUpdate(Set<String> names);
}
