package io.meshpilot.model;

import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.Set;

/**
 * A request to push config to proxies (istiod's model.PushRequest). Full pushes rebuild the
 * PushContext; incremental ones (endpoints only) do not. {@code configsUpdated} names what
 * changed, so only affected proxies and resources are pushed; requests merge while debounced.
 * {@code addressesUpdated} (istiod's AddressesUpdated) names the ztunnel Address resources that
 * changed (workload uids, service {@code namespace/hostname}s): only they are pushed to ztunnels.
 * {@code waypointsUpdated} (istiod's WaypointsUpdated) names the waypoints ({@code namespace/hostname})
 * those changes bound or unbound workloads of: their proxies' listeners are pushed too.
 */
public record PushRequest(boolean full, Set<ConfigKey> configsUpdated, Set<TriggerReason> reasons, Instant start,
                          Set<String> addressesUpdated, Set<String> waypointsUpdated) {

    public PushRequest {
        configsUpdated = Set.copyOf(configsUpdated);
        reasons = reasons.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(reasons));
        addressesUpdated = Set.copyOf(addressesUpdated);
        waypointsUpdated = Set.copyOf(waypointsUpdated);
    }

    /** A request that names no ztunnel address. */
    public PushRequest(boolean full, Set<ConfigKey> configsUpdated, Set<TriggerReason> reasons, Instant start) {
        this(full, configsUpdated, reasons, start, Set.of(), Set.of());
    }

    /**
     * Ambient index changes (istiod's AmbientUpdate): not full, only these Address resources
     * pushed, and the listeners of the waypoints {@code waypoints} whose workloads changed.
     */
    public static PushRequest addresses(Set<String> keys, Set<String> waypoints) {
        return new PushRequest(false, Set.of(), Set.of(TriggerReason.AMBIENT), Instant.now(), keys, waypoints);
    }

    public static PushRequest full(TriggerReason reason, ConfigKey... keys) {
        return new PushRequest(true, Set.of(keys), Set.of(reason), Instant.now());
    }

    public static PushRequest incremental(TriggerReason reason, ConfigKey... keys) {
        return new PushRequest(false, Set.of(keys), Set.of(reason), Instant.now());
    }

    /** Combines two requests: full if either is, union of what changed, the earlier start. */
    public PushRequest merge(PushRequest other) {
        Set<ConfigKey> keys = new HashSet<>(configsUpdated);
        keys.addAll(other.configsUpdated);
        Set<TriggerReason> why = new HashSet<>(reasons);
        why.addAll(other.reasons);
        Set<String> addresses = new HashSet<>(addressesUpdated);
        addresses.addAll(other.addressesUpdated);
        Set<String> waypoints = new HashSet<>(waypointsUpdated);
        waypoints.addAll(other.waypointsUpdated);
        return new PushRequest(full || other.full, keys, why, start.isBefore(other.start) ? start : other.start,
                addresses, waypoints);
    }
}
