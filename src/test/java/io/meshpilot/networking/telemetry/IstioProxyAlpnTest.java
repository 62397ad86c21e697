package io.meshpilot.networking.telemetry;

import static io.meshpilot.networking.telemetry.IstioProxyStatsTest.agentNode;
import static io.meshpilot.networking.telemetry.IstioProxyStatsTest.chain;
import static io.meshpilot.networking.telemetry.IstioProxyStatsTest.httpNames;
import static io.meshpilot.networking.telemetry.IstioProxyStatsTest.plainNode;
import static io.meshpilot.networking.telemetry.TelemetryFixture.SERVICES;
import static io.meshpilot.networking.telemetry.TelemetryFixture.listener;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig.AlpnOverride;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig.Protocol;
import io.meshpilot.features.EnvironmentUsage;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.envoy.SidecarListenerBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * istiod's {@code istio.alpn} HTTP filter (pilot/pkg/xds/filters/filters.go {@code Alpn}), placed
 * as listener_builder.go's buildHTTPConnectionManager places it: after gRPC stats, before fault,
 * in every connection manager but the sidecar's inbound ones, while PILOT_ENABLE_ALPN_FILTER.
 */
class IstioProxyAlpnTest {
    static final String ALPN = "istio.alpn";
    static final String GRPC_STATS = "envoy.filters.http.grpc_stats";
    static final String FAULT = "envoy.filters.http.fault";

    static List<Listener> lds(PushContext push, Proxy proxy) {
        return SidecarListenerBuilder.listeners(proxy, push, push.scope(proxy));
    }

    @Test
    void outboundConnectionManagersCarryIstiodsAlpnFilter() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            List<Listener> lds = lds(fixture.push(), Proxy.fromNode(agentNode()));
            var outbound = listener(lds, "0.0.0.0_8000").getFilterChains(0);
            List<String> names = httpNames(outbound);
            assertEquals(names.indexOf(GRPC_STATS) + 1, names.indexOf(ALPN), "after grpc_stats: " + names);
            assertEquals(names.indexOf(ALPN) + 1, names.indexOf(FAULT), "before fault: " + names);
            FilterConfig config = IstioProxyStatsTest.httpFilter(outbound, ALPN).getTypedConfig()
                    .unpack(FilterConfig.class);
            assertEquals(FilterConfig.newBuilder()
                    .addAlpnOverride(override(Protocol.HTTP10, "istio-http/1.0", "istio", "http/1.0"))
                    .addAlpnOverride(override(Protocol.HTTP11, "istio-http/1.1", "istio", "http/1.1"))
                    .addAlpnOverride(override(Protocol.HTTP2, "istio-h2", "istio", "h2"))
                    .build(), config);
            assertFalse(httpNames(chain(listener(lds, "virtualInbound"), "0.0.0.0_8000")).contains(ALPN),
                    "not on the sidecar's inbound connection managers");
        }
    }

    @Test
    void switchedOffByPilotEnableAlpnFilterAndNeverForPlainEnvoy() throws Exception {
        try (MeshFixture fixture = new MeshFixture()) {
            fixture.apply(SERVICES);
            PushContext off = fixture.push(new MeshConfigLoader().defaults(),
                    new MetadataExchange(true, List.of(), false, true));
            assertFalse(TelemetryFixture.json(lds(off, Proxy.fromNode(agentNode()))).toString().contains(ALPN),
                    "PILOT_ENABLE_ALPN_FILTER=false");
            PushContext on = fixture.push();
            assertFalse(TelemetryFixture.json(lds(on, Proxy.fromNode(plainNode()))).toString().contains(ALPN),
                    "plain Envoy");
        }
    }

    @Test
    void theSwitchesAreReadSoNotWarned() {
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(Map.of("PILOT_ENABLE_ALPN_FILTER", "false",
                "PILOT_DISABLE_MX_ALPN", "true")::get);
        MetadataExchange read = PilotFeatures.fromEnv(usage).metadataExchange();
        assertEquals(List.of(), usage.unsupported().stream().map(EnvironmentUsage.Unsupported::name).toList());
        assertFalse(read.alpnFilter());
        assertFalse(read.peerExchangeAlpn());
    }

    static AlpnOverride override(Protocol protocol, String... alpn) {
        return AlpnOverride.newBuilder().setUpstreamProtocol(protocol).addAllAlpnOverride(List.of(alpn)).build();
    }
}
