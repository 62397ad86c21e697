package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * {@link GatewayApiObject#fromJson} reads whatever the API server (or a hand-written test file)
 * holds: a metadata field of the wrong JSON type reads as if it were missing, and a missing or
 * malformed spec or status reads as empty, so one odd object never stops a conversion.
 */
class GatewayApiObjectTest {
    @Test
    void readsAWellFormedObject() {
        GatewayApiObject route = GatewayApiObject.fromJson(json("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "HTTPRoute",
                 "metadata": {"name": "r", "namespace": "default", "generation": 3, "resourceVersion": "41",
                              "creationTimestamp": "2024-01-01T00:00:01Z", "labels": {"app": "a"},
                              "annotations": {"note": "n"}},
                 "spec": {"hostnames": ["example.com"]},
                 "status": {"parents": []}}
                """));

        assertEquals(new ConfigKey("HTTPRoute", "default", "r"), route.key());
        assertEquals("gateway.networking.k8s.io/v1", route.apiVersion());
        assertEquals(3, route.generation());
        assertEquals("41", route.resourceVersion());
        assertEquals(Instant.parse("2024-01-01T00:00:01Z"), route.creationTimestamp());
        assertEquals(Map.of("app", "a"), route.labels());
        assertEquals(Map.of("note", "n"), route.annotations());
        assertEquals(json("{\"hostnames\": [\"example.com\"]}"), route.spec());
        assertEquals(json("{\"parents\": []}"), route.status());
    }

    @Test
    void metadataFieldsOfTheWrongTypeReadAsMissing() {
        GatewayApiObject gateway = GatewayApiObject.fromJson(json("""
                {"apiVersion": ["v1"], "kind": "Gateway",
                 "metadata": {"name": "gw", "namespace": {"name": "default"}, "generation": "7",
                              "resourceVersion": null, "creationTimestamp": "yesterday",
                              "labels": ["app=a"],
                              "annotations": {"text": "t", "number": 1, "flag": true, "object": {"a": 1}, "null": null}}}
                """));

        assertEquals("gw", gateway.name());
        assertEquals("", gateway.apiVersion());
        assertEquals("", gateway.namespace());
        assertEquals(0, gateway.generation(), "a generation that is a string is no generation");
        assertEquals("", gateway.resourceVersion());
        assertNull(gateway.creationTimestamp(), "a timestamp that does not parse is no timestamp");
        assertEquals(Map.of(), gateway.labels());
        assertEquals(Map.of("text", "t", "number", "1", "flag", "true"), gateway.annotations(),
                "scalars read as their text; objects and nulls are left out");
    }

    @Test
    void aMissingOrMalformedSpecOrStatusReadsAsEmpty() {
        GatewayApiObject noSpec = GatewayApiObject.fromJson(json("""
                {"apiVersion": "gateway.networking.k8s.io/v1", "kind": "GatewayClass", "metadata": {"name": "istio"}}
                """));
        GatewayApiObject listSpec = GatewayApiObject.fromJson(json("""
                {"kind": "Gateway", "metadata": "gw", "spec": ["listeners"], "status": "Accepted"}
                """));

        assertEquals(new JsonObject(), noSpec.spec());
        assertEquals(new JsonObject(), noSpec.status());
        assertEquals("", noSpec.namespace(), "cluster-scoped");
        assertEquals(new JsonObject(), listSpec.spec());
        assertEquals(new JsonObject(), listSpec.status());
        assertEquals("", listSpec.name(), "metadata that is not an object has no name");
    }

    @Test
    void neitherTheSourceJsonNorAReturnedSpecChangesTheObject() {
        JsonObject source = json("""
                {"kind": "HTTPRoute", "metadata": {"name": "r", "namespace": "default"}, "spec": {"hostnames": ["a"]}}
                """);
        GatewayApiObject route = GatewayApiObject.fromJson(source);

        source.getAsJsonObject("spec").getAsJsonArray("hostnames").add("changed-source");
        route.spec().getAsJsonArray("hostnames").add("changed-copy");
        route.status().addProperty("changed", true);

        assertEquals(json("{\"hostnames\": [\"a\"]}"), route.spec());
        assertTrue(route.status().isEmpty());
    }

    private static JsonObject json(String text) {
        return JsonParser.parseString(text).getAsJsonObject();
    }
}
