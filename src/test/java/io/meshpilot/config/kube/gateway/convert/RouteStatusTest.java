package io.meshpilot.config.kube.gateway.convert;

import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.ISTIO_SYSTEM;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.condition;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.convert;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.listener;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.parentStatus;
import static io.meshpilot.config.kube.gateway.convert.RouteFixtures.parents;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.ParentKey;
import io.meshpilot.config.kube.gateway.RouteAttachment;
import io.meshpilot.config.kube.gateway.RouteParents;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A route's {@code status.parents} and its attachments as istiod reports them
 * (pilot/pkg/config/kube/gateway/conditions.go createRouteStatus, conversion.go
 * referenceAllowed); messages as in istiod's {@code *.status.yaml.golden} files.
 */
class RouteStatusTest {
    /** Gateway istio-system/gateway: {@code http} for any namespace on *.domain.example, {@code same} only for istio-system, {@code tcp}. */
    static final RouteParents GATEWAY = parents(ISTIO_SYSTEM, "gateway",
            listener(ISTIO_SYSTEM, "gateway", "http", 80, "HTTP", "*.domain.example", "*"),
            listener(ISTIO_SYSTEM, "gateway", "same", 8080, "HTTP", "", ISTIO_SYSTEM),
            listener(ISTIO_SYSTEM, "gateway", "tcp", 34000, "TCP", "", "*"));
    static final List<String> SERVICES = List.of("httpbin.default", "httpbin.other");

    static String route(String kind, String name, String parentRefs, String hostnames, String backend) {
        return RouteFixtures.routeYaml(kind, name, parentRefs, hostnames, "- backendRefs:\n  - " + backend + "\n");
    }

    static final String HTTPBIN = "{name: httpbin, port: 80}";

    @Test
    void acceptedByEveryListenerItMatchesAndAttachedToThem() {
        RouteConversion.Output out = convert(route("HTTPRoute", "two-listeners",
                "- {name: gateway, namespace: istio-system}", "[]", HTTPBIN), SERVICES, GATEWAY);

        // "same" admits only istio-system: the other listener's acceptance wins the parentRef
        JsonObject parent = parentStatus(out, "HTTPRoute", "default", "two-listeners", 0);
        assertEquals("True/Accepted/Route was valid", condition(parent, "Accepted"));
        assertEquals(JsonParser.parseString("{name: gateway, namespace: istio-system}"), parent.get("parentRef"));
        assertEquals(GatewayApiKinds.ISTIO_CONTROLLER, parent.get("controllerName").getAsString());
        assertEquals(3, parent.getAsJsonArray("conditions").get(0).getAsJsonObject().get("observedGeneration").getAsInt());
        assertEquals(List.of(new RouteAttachment(new ParentKey("Gateway", ISTIO_SYSTEM, "gateway"), "http",
                new ConfigKey("HTTPRoute", "default", "two-listeners"))), out.attachments());
    }

    @Test
    void boundToTwoListenersSaysSo() {
        RouteParents twoHttp = parents(ISTIO_SYSTEM, "gateway",
                listener(ISTIO_SYSTEM, "gateway", "a", 80, "HTTP", "", "*"),
                listener(ISTIO_SYSTEM, "gateway", "b", 81, "HTTP", "", "*"));
        RouteConversion.Output out = convert(route("HTTPRoute", "r", "- {name: gateway, namespace: istio-system}", "[]",
                HTTPBIN), SERVICES, twoHttp);
        assertEquals("True/Accepted/Route was valid, bound to 2 parents",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 0), "Accepted"));
        assertEquals(2, out.attachments().size());
    }

    @Test
    void deniedParentsWithIstiodsReasonsAndMessages() {
        String refs = """
                - {name: gateway, namespace: istio-system, sectionName: nope}
                - {name: gateway, namespace: istio-system, sectionName: same}
                - {name: gateway, namespace: istio-system, sectionName: http}
                - {name: gateway, namespace: istio-system, port: 1234}
                """;
        RouteConversion.Output out = convert(route("HTTPRoute", "r", refs, "[other.example]", HTTPBIN), SERVICES, GATEWAY);

        // new entries are appended in descending parentRef order (section "same" > "nope" > "http" > none)
        assertEquals("False/NotAllowedByListeners/hostnames matched parent hostname \"\", but namespace \"default\" "
                        + "is not allowed by the parent",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 0), "Accepted"));
        assertEquals("False/NoMatchingParent/sectionName \"nope\" not found; sectionName \"nope\" not found; "
                        + "sectionName \"nope\" not found",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 1), "Accepted"));
        assertEquals("False/NoMatchingListenerHostname/no hostnames matched parent hostname \"*.domain.example\"",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 2), "Accepted"));
        assertEquals("False/NoMatchingParent/port 1234 not found; port 1234 not found; port 1234 not found",
                condition(parentStatus(out, "HTTPRoute", "default", "r", 3), "Accepted"));
        assertEquals(List.of(), out.virtualServices());
        assertEquals(List.of(), out.attachments());
    }

    @Test
    void aRouteKindTheListenerDoesNotAdmit() {
        RouteConversion.Output out = convert(route("TCPRoute", "tcp",
                "- {name: gateway, namespace: istio-system, sectionName: http}", "[]", HTTPBIN), SERVICES, GATEWAY);
        assertEquals("False/NotAllowedByListeners/kind gateway.networking.k8s.io/v1/TCPRoute is not allowed",
                condition(parentStatus(out, "TCPRoute", "default", "tcp", 0), "Accepted"));
    }

    @Test
    void unresolvedBackendsInResolvedRefsWhileTheRouteIsAccepted() {
        String refs = "- {name: gateway, namespace: istio-system, sectionName: http}";
        RouteConversion.Output out = convert(route("HTTPRoute", "missing", refs, "[]", "{name: missing, port: 80}")
                + "---\n" + route("HTTPRoute", "cross", refs, "[]", "{name: httpbin, namespace: other, port: 80}")
                + "---\n" + route("HTTPRoute", "kind", refs, "[]", "{name: x, kind: GcsBucket, port: 80}")
                + "---\n" + route("HTTPRoute", "hostname", refs, "[]", "{name: httpbin.default.svc.domain.suffix, port: 80}")
                + "---\n" + route("HTTPRoute", "noport", refs, "[]", "{name: httpbin}"), SERVICES, GATEWAY);

        assertEquals("False/BackendNotFound/backend(missing.default.svc.domain.suffix) not found",
                condition(parentStatus(out, "HTTPRoute", "default", "missing", 0), "ResolvedRefs"));
        assertEquals("True/Accepted/Route was valid", condition(parentStatus(out, "HTTPRoute", "default", "missing", 0), "Accepted"));
        assertEquals("False/RefNotPermitted/backendRef httpbin/other not accessible to a HTTPRoute in namespace "
                + "\"default\" (missing a ReferenceGrant?)", condition(parentStatus(out, "HTTPRoute", "default", "cross", 0), "ResolvedRefs"));
        assertEquals("False/InvalidKind/referencing unsupported backendRef: group \"\" kind \"GcsBucket\"",
                condition(parentStatus(out, "HTTPRoute", "default", "kind", 0), "ResolvedRefs"));
        assertEquals("False/InvalidDestination/service name invalid; the name of the Service must be used, not the hostname.",
                condition(parentStatus(out, "HTTPRoute", "default", "hostname", 0), "ResolvedRefs"));
        assertEquals("False/InvalidDestination/port is required in backendRef",
                condition(parentStatus(out, "HTTPRoute", "default", "noport", 0), "ResolvedRefs"));
        // the missing, ungranted and unsupported backends stay as destinations (their traffic fails); the hard errors drop the route
        assertEquals(List.of("istio-system~gateway~istio-autogenerated-k8s-gateway~http~*"),
                out.virtualServices().stream().map(c -> c.name()).toList());
    }

    @Test
    void aReferenceGrantAdmitsTheCrossNamespaceBackend() {
        String grant = """
                apiVersion: gateway.networking.k8s.io/v1beta1
                kind: ReferenceGrant
                metadata:
                  name: allow
                  namespace: other
                spec:
                  from:
                  - {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}
                  to:
                  - {group: "", kind: Service}
                ---
                """;
        RouteConversion.Output out = convert(grant + route("HTTPRoute", "cross",
                "- {name: gateway, namespace: istio-system, sectionName: http}", "[]",
                "{name: httpbin, namespace: other, port: 80}"), SERVICES, GATEWAY);
        assertEquals("True/ResolvedRefs/All references resolved",
                condition(parentStatus(out, "HTTPRoute", "default", "cross", 0), "ResolvedRefs"));
    }

    @Test
    void othersEntriesStayOursAreUpdatedInPlaceAndUnchangedConditionsKeepTheirTime() {
        String yaml = route("HTTPRoute", "r", "- {name: gateway, namespace: istio-system, sectionName: http}", "[]", HTTPBIN)
                + """
                status:
                  parents:
                  - parentRef: {name: gone, namespace: istio-system}
                    controllerName: istio.io/gateway-controller
                    conditions: []
                  - parentRef: {name: gateway, namespace: istio-system, sectionName: http}
                    controllerName: example.com/other
                    conditions:
                    - {type: Accepted, status: "False", reason: Other, message: theirs}
                  - parentRef: {name: gateway, namespace: istio-system, sectionName: http}
                    controllerName: istio.io/gateway-controller
                    conditions:
                    - {type: Accepted, status: "True", reason: Accepted, message: Route was valid, observedGeneration: 3,
                       lastTransitionTime: "2020-01-01T00:00:00Z"}
                    - {type: ResolvedRefs, status: "True", reason: ResolvedRefs, message: old, observedGeneration: 2,
                       lastTransitionTime: "2020-01-02T00:00:00Z"}
                """;
        RouteConversion.Output out = convert(yaml, SERVICES, GATEWAY);

        var parentsOut = out.statuses().get(new ConfigKey("HTTPRoute", "default", "r")).getAsJsonArray("parents");
        assertEquals(2, parentsOut.size(), parentsOut.toString());
        assertEquals("example.com/other", parentsOut.get(0).getAsJsonObject().get("controllerName").getAsString());
        var conditions = parentsOut.get(1).getAsJsonObject().getAsJsonArray("conditions");
        assertEquals(JsonParser.parseString("""
                {type: Accepted, status: "True", reason: Accepted, message: "Route was valid", observedGeneration: 3,
                 lastTransitionTime: "2020-01-01T00:00:00Z"}"""), conditions.get(0));
        JsonObject resolved = conditions.get(1).getAsJsonObject();
        assertEquals("All references resolved", resolved.get("message").getAsString());
        assertEquals(3, resolved.get("observedGeneration").getAsInt());
        // same status: the transition time is kept though the message changed
        assertEquals("2020-01-02T00:00:00Z", resolved.get("lastTransitionTime").getAsString());
    }
}
