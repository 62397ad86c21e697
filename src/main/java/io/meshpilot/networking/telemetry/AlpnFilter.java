package io.meshpilot.networking.telemetry;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig.AlpnOverride;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig.Protocol;
import java.util.List;

/**
 * istiod's {@code istio.alpn} HTTP filter (pilot/pkg/xds/filters/filters.go {@code Alpn}): an
 * istio-proxy offers the upstream request's protocol as Istio's ALPN strings, so that the peer
 * sidecar's protocol sniffing knows HTTP/1.0, HTTP/1.1 or HTTP/2 without reading the bytes.
 */
final class AlpnFilter {
    static final String NAME = "istio.alpn";

    static final HttpFilter FILTER = HttpFilter.newBuilder().setName(NAME)
            .setTypedConfig(Any.pack(FilterConfig.newBuilder()
                    .addAlpnOverride(alpnOverride(Protocol.HTTP10, "istio-http/1.0", "istio", "http/1.0"))
                    .addAlpnOverride(alpnOverride(Protocol.HTTP11, "istio-http/1.1", "istio", "http/1.1"))
                    .addAlpnOverride(alpnOverride(Protocol.HTTP2, "istio-h2", "istio", "h2"))
                    .build()))
            .build();

    private AlpnFilter() {
    }

    private static AlpnOverride alpnOverride(Protocol protocol, String... alpn) {
        return AlpnOverride.newBuilder().setUpstreamProtocol(protocol).addAllAlpnOverride(List.of(alpn)).build();
    }
}
