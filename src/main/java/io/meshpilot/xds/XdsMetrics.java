package io.meshpilot.xds;

import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushMetric;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.monitoring.IstioGauge;
import io.meshpilot.monitoring.IstioHistogram;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

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

    /**
     * istiod's pilot_xds_write_timeout: responses whose write timed out. Our writers never time
     * a write out themselves (a slow reader holds only its own writer and one response per
     * type, see {@link Outbox}). Counted: a stream that stayed unwritable past
     * PILOT_XDS_SEND_TIMEOUT (grpc-java's Netty transport, ended with DEADLINE_EXCEEDED as
     * istiod 1.8-1.21 ended it), and Helidon's HTTP/2 flow-control wait (its
     * {@code flow-control-timeout}, 15 s), which fails the write and drops the stream.
     */
    static final IstioCounter WRITE_TIMEOUTS = IstioCounter.of("pilot_xds_write_timeout",
            "Pilot XDS response write timeouts.");

    /**
     * meshpilot_xds_send_bytes_in_flight (ours: istiod has none): response bytes handed to the
     * transport and not yet drained, of every server in the process ({@link SendBudget}).
     */
    static final AtomicLong SEND_BYTES_IN_FLIGHT = new AtomicLong();
    /**
     * meshpilot_xds_send_bytes_parked (ours): bytes of streams unwritable past the park time,
     * moved out of the send budget into the parked account ({@link SendBudget#park}).
     */
    static final AtomicLong SEND_BYTES_PARKED = new AtomicLong();
    /** meshpilot_xds_send_budget_waits_total (ours): writes that waited for the send budget. */
    static final IstioCounter SEND_BUDGET_WAITS = IstioCounter.of("meshpilot_xds_send_budget_waits_total",
            "Responses whose write waited for the server's budget of bytes in flight.");

    /** istiod's pilot_total_xds_internal_errors: requests or pushes that failed inside the server. */
    static final IstioCounter INTERNAL_ERRORS = IstioCounter.of("pilot_total_xds_internal_errors",
            "Total number of internal XDS errors in pilot.");
    /** istiod's pilot_xds_expired_nonce{type}: requests answering a response that is not the last one sent. */
    static final IstioCounter EXPIRED_NONCE = IstioCounter.of("pilot_xds_expired_nonce", "type",
            "Total number of XDS requests with an expired nonce.");
    /** istiod's pilot_xds_send_time: how long writing one response to the stream took. */
    static final IstioHistogram SEND_TIME = IstioHistogram.of("pilot_xds_send_time", null,
            "Total time in seconds Pilot takes to send generated configuration.",
            .01, .1, 1, 3, 5, 10, 20, 30);
    /** istiod's pilot_xds_config_size_bytes{type}: the size of each response pushed. */
    static final IstioHistogram CONFIG_SIZE = IstioHistogram.of("pilot_xds_config_size_bytes", "type",
            "Distribution of configuration sizes pushed to clients",
            1, 10000, 1000000, 4000000, 10000000, 40000000);

    /** pilot_xds_{cds,eds,lds,rds}_reject{node,err}: NACKs per proxy and error code. */
    static IstioCounter rejects(String shortType) {
        return IstioCounter.gaugeTyped("pilot_xds_" + shortType + "_reject", "node", "err",
                "Pilot rejected " + shortType.toUpperCase(Locale.ROOT) + " configs.");
    }

    /** Go's names of the gRPC codes, indexed by code: istiod labels a NACK with {@code codes.Code(n).String()}. */
    private static final List<String> GRPC_CODE_NAMES = List.of("OK", "Canceled", "Unknown", "InvalidArgument",
            "DeadlineExceeded", "NotFound", "AlreadyExists", "PermissionDenied", "ResourceExhausted", "FailedPrecondition",
            "Aborted", "OutOfRange", "Unimplemented", "Internal", "Unavailable", "DataLoss", "Unauthenticated");

    /**
     * The {@code err} label of a NACK: istiod's name of its gRPC code. A code outside gRPC's
     * set is "unknown" (Go would print {@code Code(n)}: the proxy chooses n, so it would be a
     * series per number).
     */
    static String rejectCode(int code) {
        return code >= 0 && code < GRPC_CODE_NAMES.size() ? GRPC_CODE_NAMES.get(code) : "unknown";
    }

    /** Drops the reject series of {@code node} (it has no stream left). */
    static void removeRejects(String node) {
        for (String type : List.of("cds", "eds", "lds", "rds")) {
            rejects(type).removeSeries("node", node);
        }
    }

    /**
     * istiod's push-status gauges (PushContext.UpdateMetrics): one per {@link PushMetric},
     * valued the number of its entries in the PushContext in force and the live checks
     * ({@link DiscoveryServer#diagnostics()}; 0 before the first push).
     * Metrics declared after start-up are registered when a push that knows them is installed.
     */
    static final class PushStatusGauges {
        private final Supplier<PushDiagnostics> current;
        private final Set<String> registered = ConcurrentHashMap.newKeySet();

        PushStatusGauges(Supplier<PushDiagnostics> current) {
            this.current = current;
        }

        /** Registers the gauges of every metric declared so far (idempotent). */
        void registerKnown() {
            for (PushMetric m : PushMetric.known()) {
                if (registered.add(m.name())) {
                    IstioGauge.register(m.name(), m.help(), () -> current.get().count(m));
                }
            }
        }
    }
}
