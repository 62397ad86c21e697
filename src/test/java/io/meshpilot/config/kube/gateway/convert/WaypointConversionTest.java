package io.meshpilot.config.kube.gateway.convert;

import static io.meshpilot.config.kube.gateway.convert.GatewayApiTestInputs.condition;
import static io.meshpilot.config.kube.gateway.convert.GatewayApiTestInputs.listener;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.ConversionResult;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Gateways of class {@code istio-waypoint} as istiod converts them with ambient waypoints on
 * (pilot/pkg/config/kube/gateway gateway_collection.go, conversion.go buildListener,
 * unexpectedWaypointListener, reportGatewayStatus): status only, no Istio Gateway; the HBONE
 * listener on 15008 accepted, anything else flagged; addresses from the waypoint's Service,
 * named after the Gateway alone, as IP and hostname.
 */
class WaypointConversionTest {
    private static final ConfigKey WAYPOINT = new ConfigKey("Gateway", "shop", "waypoint");
    private static final String GATEWAY = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata: {name: waypoint, namespace: shop, labels: {istio.io/waypoint-for: service}}
            spec:
              gatewayClassName: istio-waypoint
              listeners:
              - {name: mesh, port: 15008, protocol: HBONE}
            """;

    private static ConversionResult convert(GatewayApiInputs inputs) {
        return GatewayApiConversion.convert(inputs);
    }

    @Test
    void aWaypointWithItsServiceReadyIsAcceptedAndProgrammedWithIpAndHostnameAddresses() {
        ConversionResult result = convert(new GatewayApiTestInputs().ambientWaypoints().yaml(GATEWAY)
                .service("waypoint.shop.svc.domain.suffix", "shop", "ClusterIP", List.of(15021, 15008), List.of(),
                        Map.of(15021, List.of(15021), 15008, List.of(15008)))
                .build());

        // a waypoint's config is built from the ambient index, not from Istio Gateways
        assertEquals(List.of(), result.gateways());
        // yet its status follows its Service: a change of that Service's endpoints converts again
        assertEquals(Set.of("waypoint.shop.svc.domain.suffix"), result.gatewayServices());
        JsonObject status = result.statuses().get(WAYPOINT);
        assertEquals("True Accepted: Resource accepted", condition(status, "Accepted"));
        assertEquals("True Programmed: Resource programmed, assigned to service(s) waypoint.shop.svc.domain.suffix:15008",
                condition(status, "Programmed"));
        assertEquals(JsonParser.parseString("""
                [{"type": "IPAddress", "value": "10.0.0.1"},
                 {"type": "Hostname", "value": "waypoint.shop.svc.domain.suffix"}]"""), status.get("addresses"));
        JsonObject mesh = listener(status, "mesh");
        assertEquals("True Accepted: No errors found", condition(mesh, "Accepted"));
        assertEquals("True Programmed: No errors found", condition(mesh, "Programmed"));
        assertEquals(JsonParser.parseString("[]"), mesh.get("supportedKinds"));
        assertEquals(Map.of(), result.problems());
    }

    @Test
    void aListenerOtherThanHboneOn15008IsFlaggedButTheWaypointStaysAccepted() {
        ConversionResult result = convert(new GatewayApiTestInputs().ambientWaypoints().yaml(GATEWAY.replace(
                "{name: mesh, port: 15008, protocol: HBONE}", "{name: mesh, port: 8080, protocol: HTTP}")).build());

        JsonObject status = result.statuses().get(WAYPOINT);
        assertEquals("True Accepted: Resource accepted", condition(status, "Accepted"));
        assertEquals("False AddressNotUsable: Failed to assign to any requested addresses: hostname "
                + "\"waypoint.shop.svc.domain.suffix\" not found", condition(status, "Programmed"));
        assertEquals("False UnsupportedProtocol: Expected a single listener on port 15008 with protocol \"HBONE\"",
                condition(listener(status, "mesh"), "Accepted"));
        assertEquals(List.of(), result.gateways());
    }

    @Test
    void withoutAmbientWaypointsTheClassIsNotOursAndHboneIsRefusedElsewhere() {
        ConversionResult off = convert(new GatewayApiTestInputs().yaml(GATEWAY).build());
        assertNull(off.statuses().get(WAYPOINT));

        ConversionResult hboneOnIstio = convert(new GatewayApiTestInputs().ambientWaypoints()
                .yaml(GATEWAY.replace("istio-waypoint", "istio")).build());
        assertEquals("False UnsupportedProtocol: protocol \"HBONE\" is only supported for waypoint proxies",
                condition(listener(hboneOnIstio.statuses().get(WAYPOINT), "mesh"), "Accepted"));
    }
}
