package io.meshpilot.xds;

import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.monitoring.IstioHistogram;

/** istiod's push-pipeline metrics (names, labels and buckets as istiod exports them). */
final class XdsMetrics {
    private XdsMetrics() {
    }

    static final IstioHistogram CONVERGENCE = IstioHistogram.of("pilot_proxy_convergence_time", null,
            "Delay in seconds between config change and a proxy receiving all required configuration.",
            .1, .5, 1, 3, 5, 10, 20, 30);
    static final IstioHistogram QUEUE_TIME = IstioHistogram.of("pilot_proxy_queue_time", null,
            "Time in seconds, a proxy is in the push queue before being dequeued.",
            .1, .5, 1, 3, 5, 10, 20, 30);
    static final IstioHistogram PUSH_TIME = IstioHistogram.of("pilot_xds_push_time", "type",
            "Total time in seconds Pilot takes to push lds, rds, cds and eds.",
            .01, .1, 1, 3, 5, 10, 20, 30);
    static final IstioHistogram DEBOUNCE_TIME = IstioHistogram.of("pilot_debounce_time", null,
            "Delay in seconds between the first config enters debouncing and the merged push request is pushed into the push queue.",
            .01, .1, 1, 3, 5, 10, 20, 30);
    static final IstioHistogram PUSH_CONTEXT_INIT = IstioHistogram.of("pilot_pushcontext_init_seconds", null,
            "Total time in seconds Pilot takes to init pushContext.",
            .01, .1, .5, 1, 3, 5);

    /** pilot_xds_{cds,eds,lds,rds}_reject{node,err}: NACKs per proxy and error code. */
    static IstioCounter rejects(String shortType) {
        return IstioCounter.of("pilot_xds_" + shortType + "_reject", "node", "err",
                "Pilot rejected " + shortType.toUpperCase(java.util.Locale.ROOT) + " configs.");
    }
}
