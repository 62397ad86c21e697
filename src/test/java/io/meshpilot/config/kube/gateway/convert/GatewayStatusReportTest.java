package io.meshpilot.config.kube.gateway.convert;

import static io.meshpilot.config.kube.gateway.convert.GatewayApiTestInputs.condition;
import static io.meshpilot.config.kube.gateway.convert.GatewayApiTestInputs.listener;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.ParentKey;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.kube.gateway.RouteAttachment;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * GatewayClass and Gateway status as istiod reports it (reportGatewayStatus, GetClassStatus,
 * reportUnmanagedGatewayStatus; messages as in its status goldens).
 */
class GatewayStatusReportTest {
    private static final ConfigKey GATEWAY = new ConfigKey("Gateway", "istio-system", "gateway");
    private static final String CLASSES = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: GatewayClass
            metadata: {name: istio, generation: 3}
            spec: {controllerName: istio.io/gateway-controller}
            ---
            apiVersion: gateway.networking.k8s.io/v1
            kind: GatewayClass
            metadata: {name: other}
            spec: {controllerName: example.com/other}
            ---
            """;

    private static Map<ConfigKey, JsonObject> statuses(GatewayApiInputs inputs, List<RouteAttachment> attachments) {
        return GatewayConversion.convert(inputs, ReferenceGrants.of(inputs.objects())).statuses(attachments);
    }

    private static GatewayApiTestInputs withIngress(String yaml) {
        return new GatewayApiTestInputs().yaml(yaml)
                .service("istio-ingressgateway.istio-system.svc.domain.suffix", "istio-system", "LoadBalancer",
                        List.of(80, 443), List.of("1.2.3.4"), Map.of(80, List.of(8080), 443, List.of(0)));
    }



    @Test
    void classesOfOurControllerAreAcceptedOthersAreLeftAlone() {
        Map<ConfigKey, JsonObject> out = statuses(new GatewayApiTestInputs().yaml(CLASSES + "{}").build(), List.of());

        JsonObject istio = out.get(new ConfigKey("GatewayClass", "", "istio"));
        assertEquals("True Accepted: Handled by Istio controller", condition(istio, "Accepted"));
        assertEquals(3, JsonFields.objects(istio, "conditions").get(0).get("observedGeneration").getAsInt());
        assertNull(out.get(new ConfigKey("GatewayClass", "", "other")));
    }

    @Test
    void aServedGatewayIsAcceptedProgrammedOnItsServiceAndCountsAttachedRoutes() {
        GatewayApiInputs inputs = withIngress(CLASSES + """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: gateway, namespace: istio-system}
                spec:
                  addresses: [{value: istio-ingressgateway, type: Hostname}]
                  gatewayClassName: istio
                  listeners:
                  - {name: default, port: 80, protocol: HTTP, allowedRoutes: {namespaces: {from: All}}}
                  - {name: tcp-only, port: 80, hostname: tcp.example, protocol: HTTP,
                     allowedRoutes: {kinds: [{kind: TCPRoute}]}}
                """).build();
        ParentKey gateway = new ParentKey("Gateway", "istio-system", "gateway");
        List<RouteAttachment> attachments = List.of(
                new RouteAttachment(gateway, "default", new ConfigKey("HTTPRoute", "default", "a")),
                new RouteAttachment(gateway, "default", new ConfigKey("HTTPRoute", "default", "b")));

        JsonObject status = statuses(inputs, attachments).get(GATEWAY);

        assertEquals("True Accepted: Resource accepted", condition(status, "Accepted"));
        assertEquals("True Programmed: Resource programmed, assigned to service(s) "
                + "istio-ingressgateway.istio-system.svc.domain.suffix:80", condition(status, "Programmed"));
        assertEquals("True ResolvedRefs: All references resolved", condition(status, "ResolvedRefs"));
        assertEquals(List.of(GatewayApiTestInputs.json("{\"type\":\"IPAddress\",\"value\":\"1.2.3.4\"}")),
                JsonFields.objects(status, "addresses"));
        JsonObject http = listener(status, "default");
        assertEquals(2, http.get("attachedRoutes").getAsInt());
        assertEquals("True Accepted: No errors found", condition(http, "Accepted"));
        assertEquals("False NoConflicts: No errors found", condition(http, "Conflicted"));
        assertEquals("True Programmed: No errors found", condition(http, "Programmed"));
        assertEquals("True ResolvedRefs: No errors found", condition(http, "ResolvedRefs"));
        assertEquals(JsonParser.parseString("""
                [{"group":"gateway.networking.k8s.io","kind":"HTTPRoute"},
                 {"group":"gateway.networking.k8s.io","kind":"GRPCRoute"}]"""),
                http.get("supportedKinds"));
        JsonObject tcpOnly = listener(status, "tcp-only");
        assertEquals(0, tcpOnly.get("attachedRoutes").getAsInt());
        assertEquals("False InvalidRouteKinds: Invalid route kinds", condition(tcpOnly, "ResolvedRefs"));
        assertEquals(0, JsonFields.objects(tcpOnly, "supportedKinds").size());
    }

    @Test
    void addressProblemsAndInvalidListenersAsIstiodWordsThem() {
        GatewayApiInputs inputs = withIngress(CLASSES + """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: gateway, namespace: istio-system}
                spec:
                  addresses: [{value: istio-ingressgateway, type: Hostname}]
                  gatewayClassName: istio
                  listeners:
                  - {name: http, port: 80, protocol: HTTP}
                  - {name: workload-port, port: 8080, protocol: HTTP}
                  - {name: udp, port: 1234, protocol: UDP}
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: managed, namespace: apps}
                spec:
                  gatewayClassName: istio
                  infrastructure: {parametersRef: {group: "", kind: ConfigMap, name: does-not-exist}}
                  listeners: [{name: lower, port: 1234, protocol: http}]
                """).build();

        Map<ConfigKey, JsonObject> out = statuses(inputs, List.of());
        JsonObject status = out.get(GATEWAY);

        assertEquals("True ListenersNotValid: One or more of the Gateway's listeners are invalid",
                condition(status, "Accepted"));
        assertEquals("False AddressNotUsable: Assigned to service(s) istio-ingressgateway.istio-system.svc.domain.suffix:80, "
                + "but failed to assign to all requested addresses: port 1234 not found for hostname "
                + "\"istio-ingressgateway.istio-system.svc.domain.suffix\"; port 8080 not found for hostname "
                + "\"istio-ingressgateway.istio-system.svc.domain.suffix\" (hint: the service port should be specified, "
                + "not the workload port. Did you mean one of these ports: [80]?)", condition(status, "Programmed"));
        assertEquals("False UnsupportedProtocol: protocol \"UDP\" is unsupported",
                condition(listener(status, "udp"), "Accepted"));
        JsonObject managed = out.get(new ConfigKey("Gateway", "apps", "managed"));
        assertEquals("False InvalidParameters: parametersRef ConfigMap apps/does-not-exist does not exist",
                condition(managed, "Accepted"));
        assertEquals("False AddressNotUsable: Failed to assign to any requested addresses: hostname "
                + "\"managed-istio.apps.svc.domain.suffix\" not found", condition(managed, "Programmed"));
        assertEquals("False UnsupportedProtocol: protocol \"http\" is unsupported. hint: \"HTTP\" (uppercase) may be "
                + "supported", condition(listener(managed, "lower"), "Accepted"));
        assertFalse(managed.has("addresses"), "no address until one is known");
    }

    @Test
    void unchangedConditionsKeepTheirTransitionTimeAndRemovedListenersArePruned() {
        String gateway = """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: gateway, namespace: istio-system}
                spec:
                  addresses: [{value: istio-ingressgateway, type: Hostname}]
                  gatewayClassName: istio
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                status:
                  conditions:
                  - {type: Accepted, status: "True", reason: Accepted, message: Resource accepted,
                     lastTransitionTime: "2020-01-01T00:00:00Z"}
                  - {type: Programmed, status: "False", reason: Invalid, message: old,
                     lastTransitionTime: "2020-01-01T00:00:00Z"}
                  - {type: Foreign, status: "True", reason: Other, message: kept, lastTransitionTime: "2020-01-01T00:00:00Z"}
                  listeners:
                  - {name: removed, attachedRoutes: 1, supportedKinds: [], conditions: []}
                """;

        JsonObject status = statuses(withIngress(CLASSES + gateway).build(), List.of()).get(GATEWAY);

        JsonObject accepted = JsonFields.objects(status, "conditions").get(0);
        assertEquals("2020-01-01T00:00:00Z", JsonFields.string(accepted, "lastTransitionTime"));
        JsonObject programmed = JsonFields.objects(status, "conditions").get(1);
        assertEquals("Programmed", JsonFields.string(programmed, "type"));
        assertFalse(JsonFields.string(programmed, "lastTransitionTime").startsWith("2020"), "changed status, new time");
        assertEquals("True Other: kept", condition(status, "Foreign"), "conditions of others are kept");
        assertEquals(List.of("http"), JsonFields.objects(status, "listeners").stream()
                .map(l -> JsonFields.string(l, "name")).toList());
    }

    @Test
    void aRemoteGatewayIsAcceptedAndDeclaredProgrammedWithItsSpecAddresses() {
        JsonObject status = statuses(new GatewayApiTestInputs().yaml("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: gateway, namespace: istio-system}
                spec:
                  addresses: [{value: eastwest.example.com, type: Hostname}]
                  gatewayClassName: istio-remote
                  listeners: [{name: cross-network, port: 15443, protocol: TLS, tls: {mode: Passthrough}}]
                """).build(), List.of()).get(GATEWAY);

        assertEquals("True Accepted: Resource accepted", condition(status, "Accepted"));
        assertEquals("True Programmed: This Gateway is remote; Istio will not program it", condition(status, "Programmed"));
        assertEquals(List.of(GatewayApiTestInputs.json("{\"value\":\"eastwest.example.com\",\"type\":\"Hostname\"}")),
                JsonFields.objects(status, "addresses"));
        assertFalse(status.has("listeners"));
    }
}
