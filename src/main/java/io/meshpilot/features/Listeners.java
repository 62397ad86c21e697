package io.meshpilot.features;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The five listeners (docs/CONFIGURATION.md). An address is null when its flag was set to the
 * empty string: istiod then serves that listener's content on the http port instead.
 *
 * @param http       --httpAddr (readiness, debug, admin API)
 * @param grpc       --grpcAddr (plaintext xDS)
 * @param secureGrpc --secureGRPCAddr (TLS xDS + CA)
 * @param monitoring --monitoringAddr (metrics, version, debug)
 * @param https      --httpsAddr (webhooks)
 */
public record Listeners(ListenAddress http, ListenAddress grpc, ListenAddress secureGrpc,
                        ListenAddress monitoring, ListenAddress https) {
    public Listeners {
        if (http == null) {
            throw new IllegalArgumentException("--httpAddr must not be empty");
        }
    }

    /** The listeners by the names used in logs, metrics and /api/v1/server. */
    public Map<String, ListenAddress> byName() {
        var m = new LinkedHashMap<String, ListenAddress>();
        m.put(ListenerNames.HTTP, http);
        m.put(ListenerNames.GRPC, grpc);
        m.put(ListenerNames.GRPC_SECURE, secureGrpc);
        m.put(ListenerNames.MONITORING, monitoring);
        m.put(ListenerNames.WEBHOOK, https);
        return Collections.unmodifiableMap(m);
    }
}
