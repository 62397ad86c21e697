package io.meshpilot.config;

import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.networking.v1alpha3.VirtualService;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fields the schema does not know: left out with a warning by default (as istiod reads stored
 * config), rejected with Strict, dropped silently with Ignore; wrong types and invalid values
 * are rejected in every mode.
 */
class UnknownFieldsTest {
    static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    /** An HTTP route with websocketUpgrade, a field older Istio APIs had and today's has not. */
    static final String WEBSOCKET = """
            apiVersion: networking.istio.io/v1alpha3
            kind: VirtualService
            metadata:
              name: chat
              namespace: default
            spec:
              hosts:
              - chat.example.com
              http:
              - match:
                - uri:
                    prefix: /ws
                route:
                - destination:
                    host: chat.example.com
                websocketUpgrade: true
            """;

    /** Unknown keys at the top, in metadata, in spec and in a nested message. */
    static final String LEVELS = """
            apiVersion: networking.istio.io/v1
            kind: VirtualService
            metadata:
              name: levels
              team: a
            extra: 1
            spec:
              hosts: [levels.example.com]
              future: {a: 1}
              http:
              - route:
                - destination:
                    host: levels.example.com
                    port: {number: 80, nickname: web}
            """;

    static List<String> paths(List<DocumentError> errors) {
        return errors.stream().map(DocumentError::path).toList();
    }

    @Test
    void aRouteWithTheRetiredWebsocketUpgradeLoadsWithAWarning() {
        ConfigParser.Result r = PARSER.parse("old.yaml", WEBSOCKET);
        assertEquals(List.of(), r.errors());
        assertEquals(1, r.configs().size());
        VirtualService vs = (VirtualService) r.configs().get(0).spec();
        assertEquals("chat.example.com", vs.getHttp(0).getRoute(0).getDestination().getHost());
        assertEquals(1, r.warnings().size(), r.warnings().toString());
        DocumentError w = r.warnings().get(0);
        assertEquals("old.yaml", w.source());
        assertEquals(16, w.line());
        assertEquals("spec.http[0].websocketUpgrade", w.path());
        assertTrue(w.reason().startsWith("unknown field \"websocketUpgrade\" in istio.networking.v1alpha3.HTTPRoute"),
                w.reason());
        assertEquals("VirtualService", w.kind());
        assertEquals("chat", w.name());
    }

    @Test
    void strictRejectsItWithFileLinePathAndReason() {
        ConfigParser.Result r = PARSER.parse("old.yaml", WEBSOCKET, FieldValidation.STRICT);
        assertEquals(List.of(), r.configs());
        assertEquals(1, r.errors().size(), r.errors().toString());
        DocumentError e = r.errors().get(0);
        assertEquals(16, e.line());
        assertEquals("spec.http[0].websocketUpgrade", e.path());
        assertTrue(e.reason().contains("unknown field \"websocketUpgrade\""), e.reason());
    }

    @Test
    void ignoreLoadsItWithoutAWarning() {
        ConfigParser.Result r = PARSER.parse("old.yaml", WEBSOCKET, FieldValidation.IGNORE);
        assertEquals(1, r.configs().size());
        assertEquals(List.of(), r.errors());
        assertEquals(List.of(), r.warnings());
    }

    @Test
    void unknownFieldsAtEveryLevelAreNamedByTheirPath() {
        ConfigParser.Result r = PARSER.parse("levels.yaml", LEVELS);
        assertEquals(List.of(), r.errors());
        assertEquals(1, r.configs().size());
        assertEquals(List.of("extra", "metadata.team", "spec.future", "spec.http[0].route[0].destination.port.nickname"),
                paths(r.warnings()).stream().sorted().toList());
        assertEquals(List.of(6, 5, 9, 14), r.warnings().stream().sorted(Comparator.comparing(DocumentError::path))
                .map(DocumentError::line).toList());
        assertEquals(List.of("extra", "metadata.team", "spec.future", "spec.http[0].route[0].destination.port.nickname"),
                paths(PARSER.parse("levels.yaml", LEVELS, FieldValidation.STRICT).errors()).stream().sorted().toList(),
                "Strict: the same four, as errors");
    }

    @Test
    void structContentHasNoUnknownFields() {
        ConfigParser.Result r = PARSER.parse("ef.yaml", """
                apiVersion: networking.istio.io/v1alpha3
                kind: EnvoyFilter
                metadata: {name: ef, namespace: istio-system}
                spec:
                  configPatches:
                  - applyTo: HTTP_FILTER
                    match:
                      context: SIDECAR_INBOUND
                    patch:
                      operation: INSERT_BEFORE
                      value:
                        name: anything.goes.here
                        typed_config: {"@type": "type.googleapis.com/x.Y", whatever: {deep: [1, 2]}}
                """, FieldValidation.STRICT);
        assertEquals(List.of(), r.errors());
        assertTrue(r.warnings().stream().noneMatch(w -> w.reason().contains("unknown field")), r.warnings().toString());
        assertEquals(1, r.configs().size());
    }

    @Test
    void wrongTypesAndInvalidValuesAreStillRejectedWithLineAndPath() {
        String wrongType = WEBSOCKET.replace("host: chat.example.com\n", "host: chat.example.com\n      weight: fifty\n");
        ConfigParser.Result r = PARSER.parse("bad.yaml", wrongType);
        assertEquals(List.of(), r.configs());
        assertEquals(List.of("spec.http[0].route[0].weight"), paths(r.errors()));
        assertEquals(16, r.errors().get(0).line());
        assertTrue(r.errors().get(0).reason().contains("expected a whole number"), r.errors().get(0).reason());
        assertEquals(List.of(), r.warnings(), "a rejected document has errors, not warnings");

        ConfigParser.Result invalid = PARSER.parse("bad.yaml", WEBSOCKET.replace("- chat.example.com", "- \"*\"")
                .replace("host: chat.example.com", "host: \"\""));
        assertEquals(List.of(), invalid.configs());
        assertTrue(paths(invalid.errors()).contains("spec.http[0].route[0].destination.host"), invalid.errors().toString());
        assertTrue(invalid.errors().stream().allMatch(e -> e.line() > 0 && e.source().equals("bad.yaml")),
                invalid.errors().toString());
    }

    @Test
    void aRewrittenFileKeepsItsWarnings() {
        String other = WEBSOCKET.replace("name: chat", "name: other").replace("    websocketUpgrade: true\n", "");
        ConfigParser.Result first = PARSER.parse("f.yaml", WEBSOCKET + "---\n" + other);
        ConfigParser.Result second = PARSER.parse("f.yaml", other.replace("/ws", "/other") + "---\n" + WEBSOCKET,
                first.reusable());
        assertEquals(1, first.warnings().size());
        assertEquals(1, second.warnings().size(), second.warnings().toString());
        DocumentError w = second.warnings().get(0);
        assertEquals(1, w.document(), "the warning follows its document");
        assertEquals(first.warnings().get(0).line() + other.split("\n").length + 1, w.line());
        assertEquals(first.warnings().get(0).path(), w.path());
        ConfigParser.Result third = PARSER.parse("f.yaml", other.replace("/ws", "/other") + "---\n" + WEBSOCKET,
                second.reusable());
        assertEquals(second.warnings(), third.warnings(), "unchanged text, same warnings");
    }

    @Test
    void aKindInTheWrongGroupSaysWhichGroupServesIt() {
        ConfigParser.Result r = PARSER.parse("g.yaml", """
                apiVersion: networking.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: pa}
                spec: {}
                """);
        String reason = r.errors().get(0).reason();
        assertTrue(reason.startsWith("PeerAuthentication is not in networking.istio.io: it is security.istio.io"), reason);
        String version = PARSER.parse("v.yaml", WEBSOCKET.replace("v1alpha3", "v9")).errors().get(0).reason();
        assertEquals("version v9 of networking.istio.io VirtualService is not served (served: v1, v1beta1, v1alpha3)",
                version);
    }
}
