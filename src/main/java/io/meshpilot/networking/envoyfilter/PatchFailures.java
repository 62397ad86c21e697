package io.meshpilot.networking.envoyfilter;

import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;
import io.meshpilot.monitoring.IstioCounter;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A patch that converted but cannot apply to one object (a MERGE whose typed config is of
 * another type than the filter's): the object keeps its value, as istiod leaves a filter
 * unchanged when MergeAnyWithAny fails; logged once per patch and counted.
 */
final class PatchFailures {
    private static final Logger LOG = Logger.getLogger(PatchFailures.class.getName());
    static final IstioCounter ERRORS = IstioCounter.of(
            "pilot_envoy_filter_patch_errors", "patch", "EnvoyFilter patches skipped for an object they cannot merge into.");
    private static final Set<String> LOGGED = ConcurrentHashMap.newKeySet();

    void failed(ConfigPatch cp, String object, RuntimeException e) {
        ERRORS.increment(cp.applyTo().name().toLowerCase(Locale.ROOT));
        if (LOGGED.size() < 10_000 && LOGGED.add(cp.id() + " " + object)) {
            LOG.log(Level.WARNING, "EnvoyFilter " + cp.id() + " not applied to " + object + ": " + e.getMessage());
        }
    }
}
