package io.meshpilot.networking.telemetry;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Where Istio's filters go in a connection manager whatever filters it already has (review s3
 * finding 12): grpc_stats and istio.alpn before fault, cors and the router, whichever comes
 * first, istio.stats right before the router, so the router stays last (Envoy refuses a
 * listener whose terminal filter is not last).
 */
class IstioProxyFiltersOrderTest {
    static final String MX = "istio.metadata_exchange";
    static final String STATS = "istio.stats";
    static final String ALPN = "istio.alpn";

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(List.of("envoy.filters.http.fault", "envoy.filters.http.cors", "envoy.filters.http.router"),
                        List.of(MX, "envoy.filters.http.grpc_stats", ALPN, "envoy.filters.http.fault",
                                "envoy.filters.http.cors", STATS, "envoy.filters.http.router")),
                Arguments.of(List.of("envoy.filters.http.cors", "envoy.filters.http.router"),
                        List.of(MX, "envoy.filters.http.grpc_stats", ALPN, "envoy.filters.http.cors", STATS,
                                "envoy.filters.http.router")),
                Arguments.of(List.of("envoy.filters.http.router"),
                        List.of(MX, "envoy.filters.http.grpc_stats", ALPN, STATS, "envoy.filters.http.router")),
                Arguments.of(List.of("envoy.filters.http.rbac", "envoy.filters.http.router"),
                        List.of(MX, "envoy.filters.http.rbac", "envoy.filters.http.grpc_stats", ALPN, STATS,
                                "envoy.filters.http.router")));
    }

    @ParameterizedTest
    @MethodSource("cases")
    void istioFiltersKeepTheRouterLast(List<String> before, List<String> after) {
        HttpConnectionManager.Builder hcm = HttpConnectionManager.newBuilder();
        before.forEach(n -> hcm.addHttpFilters(HttpFilter.newBuilder().setName(n)));
        new IstioProxyFilters(HttpFilter.newBuilder().setName(MX).build(), null, HttpFilter.newBuilder().setName(ALPN).build(),
                List.of(HttpFilter.newBuilder().setName(STATS).build()), List.of()).addHttp(hcm);
        assertEquals(after, hcm.getHttpFiltersList().stream().map(HttpFilter::getName).toList());
    }
}
