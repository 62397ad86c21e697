package io.meshpilot.security;

import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.monitoring.IstioGauge;
import java.util.function.Supplier;

/** istiod's CA metrics (citadel_server_*), under its names so its dashboards and alerts work. */
public final class CaMetrics {
    static final IstioCounter CSR_COUNT = IstioCounter.of("citadel_server_csr_count",
            "The number of CSRs received by Citadel server.");
    static final IstioCounter SUCCESS = IstioCounter.of("citadel_server_success_cert_issuance_count",
            "The number of certificates issuances that have succeeded.");
    static final IstioCounter AUTHENTICATION_FAILURE = IstioCounter.of("citadel_server_authentication_failure_count",
            "The number of authentication failures.");
    static final IstioCounter CSR_PARSING_ERROR = IstioCounter.of("citadel_server_csr_parsing_err_count", "error",
            "The number of errors occurred when parsing the CSR.");
    static final IstioCounter SIGN_ERROR = IstioCounter.of("citadel_server_csr_sign_err_count", "error",
            "The number of errors occurred when signing the CSR.");

    private CaMetrics() {
    }

    /** Expiry times (seconds since the epoch) of the root and of the signing chain. */
    public static void expiryGauges(Supplier<Long> rootExpiry, Supplier<Long> chainExpiry) {
        IstioGauge.register("citadel_server_root_cert_expiry_timestamp",
                "The unix timestamp, in seconds, when Citadel root cert will expire.", rootExpiry);
        IstioGauge.register("citadel_server_cert_chain_expiry_timestamp",
                "The unix timestamp, in seconds, when Citadel cert chain will expire.", chainExpiry);
        // istiod's derived gauges: the time left, negative once expired
        IstioGauge.register("citadel_server_root_cert_expiry_seconds",
                "The time remaining, in seconds, before the root cert will expire. "
                        + "A negative value indicates the cert is expired.",
                () -> rootExpiry.get() - System.currentTimeMillis() / 1000.0);
        IstioGauge.register("citadel_server_cert_chain_expiry_seconds",
                "The time remaining, in seconds, before the Istio Generated cert chain will expire. "
                        + "A negative value indicates the cert is expired.",
                () -> chainExpiry.get() - System.currentTimeMillis() / 1000.0);
    }
}
