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
 */
public record PushRequest(boolean full, Set<ConfigKey> configsUpdated, Set<TriggerReason> reasons, Instant start) {

    public PushRequest {
        configsUpdated = Set.copyOf(configsUpdated);
        reasons = reasons.isEmpty() ? Set.of() : Set.copyOf(EnumSet.copyOf(reasons));
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
        return new PushRequest(full || other.full, keys, why, start.isBefore(other.start) ? start : other.start);
    }
}
