package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.Metadata;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istiod's telemetry metadata: the endpoint's {@code istio.workload} string as
 * AppendLbEndpointMetadata composes it (canonical name and revision from
 * kubelabels.CanonicalService, "latest" left out), the tlsMode only when not disabled, and the
 * cluster's {@code istio.services} with istiod's service names.
 */
class TelemetryMetadataTest {
    static IstioEndpoint endpoint(Map<String, String> labels, String tlsMode) {
        return new IstioEndpoint("10.0.0.1", 9080, "http", labels, "", "", Locality.NONE, tlsMode, 1, null,
                "reviews-v2", "shop");
    }

    static Stream<Arguments> workloads() {
        return Stream.of(
                Arguments.of(Map.of(), "reviews-v2;shop;reviews-v2;;"),
                Arguments.of(Map.of("app", "reviews", "version", "v2", IstioEndpoint.CLUSTER_LABEL, "east"),
                        "reviews-v2;shop;reviews;v2;east"),
                Arguments.of(Map.of("app", "reviews", "app.kubernetes.io/name", "reviews-k8s",
                        "service.istio.io/canonical-name", "reviews-canonical", "version", "v2",
                        "app.kubernetes.io/version", "2.0", "service.istio.io/canonical-revision", "r2"),
                        "reviews-v2;shop;reviews-canonical;r2;"),
                Arguments.of(Map.of("app.kubernetes.io/name", "reviews-k8s", "app", "reviews", "version", "latest"),
                        "reviews-v2;shop;reviews-k8s;;"));
    }

    @ParameterizedTest
    @MethodSource("workloads")
    void endpointWorkloadIsIstiodsFiveFields(Map<String, String> labels, String expected) {
        Metadata m = TelemetryMetadata.endpoint(endpoint(labels, IstioEndpoint.TLS_ISTIO));
        assertEquals(expected, m.getFilterMetadataOrThrow("istio").getFieldsOrThrow("workload").getStringValue());
        assertEquals("istio", m.getFilterMetadataOrThrow("envoy.transport_socket_match").getFieldsOrThrow("tlsMode")
                .getStringValue());
    }

    @Test
    void aDisabledTlsModeIsNotWritten() {
        Metadata m = TelemetryMetadata.endpoint(endpoint(Map.of(), IstioEndpoint.TLS_DISABLED));
        assertFalse(m.containsFilterMetadata("envoy.transport_socket_match"));
    }

    @Test
    void clusterServicesNameKubernetesServicesByNameAndServiceEntryHostsByHost() {
        Service kube = service("reviews.shop.svc.cluster.local", null);
        Service external = service("api.example.com", new ConfigKey("ServiceEntry", "shop", "api"));
        Cluster.Builder c = Cluster.newBuilder();
        TelemetryMetadata.addServices(c, List.of(kube, external));
        TelemetryMetadata.addConfig(c, new ConfigKey("DestinationRule", "shop", "reviews"));
        var istio = c.getMetadata().getFilterMetadataOrThrow("istio");
        var services = istio.getFieldsOrThrow("services").getListValue().getValuesList();
        assertEquals("reviews", services.get(0).getStructValue().getFieldsOrThrow("name").getStringValue());
        assertEquals("reviews.shop.svc.cluster.local", services.get(0).getStructValue().getFieldsOrThrow("host")
                .getStringValue());
        assertEquals("api.example.com", services.get(1).getStructValue().getFieldsOrThrow("name").getStringValue());
        assertEquals("shop", services.get(1).getStructValue().getFieldsOrThrow("namespace").getStringValue());
        assertEquals("/apis/networking.istio.io/v1/namespaces/shop/destination-rule/reviews",
                istio.getFieldsOrThrow("config").getStringValue(), "the services stay when the config is added");
    }

    static Service service(String host, ConfigKey key) {
        return new Service(host, "shop", List.of(new Port("http", 9080, Protocol.HTTP)), "0.0.0.0", Map.of(), "",
                Resolution.CLIENT_SIDE_LB, false, Set.of(), Map.of(), "Mock", "Kubernetes", Instant.EPOCH, key);
    }
}
