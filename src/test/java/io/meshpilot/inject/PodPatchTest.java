package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The injector's answer is a JSON Patch from the pod sent to the injected pod, element by
 * element as istiod's (gomodules jsonpatch CreatePatch over the whole pod): what injection did
 * not change is not rewritten, so a patch applies to the pod the API server holds even where
 * another mutating webhook touched other members.
 */
class PodPatchTest {

    @Test
    void anInjectedPodIsPatchedMemberByMemberNotSectionBySection() {
        JsonObject pod = SidecarInjectionTableTest.hello();
        var outcome = SidecarInjectionTableTest.injector(new SidecarInjectionTableTest.Setup()).inject(pod.deepCopy(),
                "default", "/inject");
        assertEquals(SidecarInjector.Kind.INJECTED, outcome.kind(), outcome.message());
        JsonArray patch = outcome.patch();
        List<String> paths = patch.asList().stream().map(o -> o.getAsJsonObject().get("path").getAsString()).toList();
        for (String whole : List.of("/metadata", "/spec", "/metadata/labels", "/spec/containers")) {
            assertFalse(paths.contains(whole), "rewrites " + whole + " whole: " + paths);
        }
        assertFalse(paths.stream().anyMatch(p -> p.startsWith("/metadata/ownerReferences")),
                "ownerReferences are not injection's: " + paths);
        assertTrue(paths.contains("/metadata/labels/security.istio.io~1tlsMode"),
                "a label is added by its escaped name: " + paths);
    }

    @Test
    void membersAreAddedReplacedAndRemovedWhereTheyChanged() {
        JsonObject before = JsonParser.parseString("""
                {"metadata":{"name":"p","annotations":{"a/b":"1","gone":"x","same":"s"}},
                 "spec":{"containers":[{"name":"app","image":"i:1"}],"volumes":[{"name":"v"}]}}
                """).getAsJsonObject();
        JsonObject after = JsonParser.parseString("""
                {"metadata":{"name":"p","annotations":{"a/b":"2","same":"s","new~key":"n"}},
                 "spec":{"containers":[{"name":"app","image":"i:1"},{"name":"istio-proxy","image":"proxy"}],
                   "volumes":[{"name":"v"}]}}
                """).getAsJsonObject();
        JsonArray patch = PodPatch.diff(before, after);
        assertEquals(after, SidecarInjectionTableTest.apply(before, patch));
        Set<String> ops = Set.copyOf(patch.asList().stream().map(PodPatchTest::describe).toList());
        assertTrue(ops.contains("replace /metadata/annotations/a~1b"), ops.toString());
        assertTrue(ops.contains("remove /metadata/annotations/gone"), ops.toString());
        assertTrue(ops.contains("add /metadata/annotations/new~0key"), ops.toString());
        assertTrue(ops.contains("add /spec/containers/1"), ops.toString());
        assertEquals(4, ops.size(), "nothing else: " + ops);
        assertEquals(new JsonArray(), PodPatch.diff(before, before.deepCopy()), "an unchanged pod: no operation");
    }

    @Test
    void aPodWithTenThousandVolumesAndOneMoreIsPatchedByOneAdd() {
        JsonObject before = podWithVolumes(10_000);
        JsonObject after = before.deepCopy();
        JsonObject added = json("{\"name\":\"istio-envoy\",\"emptyDir\":{\"medium\":\"Memory\"}}");
        after.getAsJsonObject("spec").getAsJsonArray("volumes").add(added);

        JsonArray patch = PodPatch.diff(before, after);

        JsonObject expected = json("{\"op\":\"add\",\"path\":\"/spec/volumes/10000\"}");
        expected.add("value", added);
        assertEquals(List.of(expected), patch.asList());
        assertEquals(after, SidecarInjectionTableTest.apply(before, patch));
    }

    /**
     * The sidecar's volumes go first, so, as istiod's, the patch rewrites the pod's volumes index
     * by index: one operation or two per volume, never a table of volumes times volumes.
     */
    @Test
    void aPodWithTenThousandVolumesIsInjectedByAPatchOfTheSameOrder() {
        JsonObject pod = SidecarInjectionTableTest.hello();
        JsonArray volumes = podWithVolumes(10_000).getAsJsonObject("spec").getAsJsonArray("volumes");
        pod.getAsJsonObject("spec").add("volumes", volumes);
        var outcome = SidecarInjectionTableTest.injector(new SidecarInjectionTableTest.Setup()).inject(pod.deepCopy(),
                "default", "/inject");
        assertEquals(SidecarInjector.Kind.INJECTED, outcome.kind(), outcome.message());
        assertTrue(outcome.patch().size() <= 2 * 10_000 + 100, "operations: " + outcome.patch().size());
        JsonArray injectedVolumes = SidecarInjectionTableTest.apply(pod, outcome.patch()).getAsJsonObject("spec")
                .getAsJsonArray("volumes");
        assertTrue(injectedVolumes.asList().containsAll(volumes.asList()), "the pod's own volumes stay");
        assertTrue(injectedVolumes.size() > volumes.size(), "the sidecar's volumes are added");
    }

    @Test
    void arraysOfObjectsAreComparedIndexByIndexWithTrailingRemovesFromTheEnd() {
        JsonObject before = json("""
                {"spec":{"containers":[{"name":"a"},{"name":"b"},{"name":"c"},{"name":"d"}]}}""");
        JsonObject after = json("""
                {"spec":{"containers":[{"name":"a"},{"name":"x"}]}}""");
        JsonArray patch = PodPatch.diff(before, after);
        assertEquals(List.of("remove /spec/containers/3", "remove /spec/containers/2",
                "replace /spec/containers/1/name"), patch.asList().stream().map(PodPatchTest::describe).toList());
        assertEquals(after, SidecarInjectionTableTest.apply(before, patch));

        JsonArray grown = PodPatch.diff(after, before);
        assertEquals(List.of("add /spec/containers/2", "add /spec/containers/3", "replace /spec/containers/1/name"),
                grown.asList().stream().map(PodPatchTest::describe).toList());
        assertEquals(before, SidecarInjectionTableTest.apply(after, grown));
    }

    @Test
    void aChangedArrayOfPlainValuesIsReplacedWhole() {
        JsonObject before = json("""
                {"spec":{"containers":[{"name":"a","args":["--x","--y"]}]}}""");
        JsonObject after = json("""
                {"spec":{"containers":[{"name":"a","args":["--x","--y","--z"]}]}}""");
        JsonArray patch = PodPatch.diff(before, after);
        assertEquals(List.of("replace /spec/containers/0/args"), patch.asList().stream().map(PodPatchTest::describe).toList());
        assertEquals(after, SidecarInjectionTableTest.apply(before, patch));
    }

    @Test
    void aMemberWhoseTypeChangedIsReplacedAndNullsAreKept() {
        JsonObject before = json("""
                {"metadata":{"name":"p","labels":null,"annotations":{"a":"1"}},"spec":{"priority":1}}""");
        JsonObject after = json("""
                {"metadata":{"name":"p","labels":null,"annotations":"x"},"spec":{"priority":"1"}}""");
        JsonArray patch = PodPatch.diff(before, after);
        assertEquals(Set.of("replace /metadata/annotations", "replace /spec/priority"),
                Set.copyOf(patch.asList().stream().map(PodPatchTest::describe).toList()));
        assertEquals(after, SidecarInjectionTableTest.apply(before, patch));
    }

    @Test
    void thePatchLeavesManagedFieldsAndTheMissingNamespaceAlone() {
        JsonObject pod = SidecarInjectionTableTest.hello();
        JsonObject meta = pod.getAsJsonObject("metadata");
        meta.remove("namespace");
        meta.add("managedFields", SidecarInjectionTableTest.array("""
                [{"manager":"kube-controller-manager","operation":"Update","apiVersion":"v1",
                  "fieldsType":"FieldsV1","fieldsV1":{"f:metadata":{"f:generateName":{}}}}]"""));
        var outcome = SidecarInjectionTableTest.injector(new SidecarInjectionTableTest.Setup()).inject(pod.deepCopy(),
                "default", "/inject");
        assertEquals(SidecarInjector.Kind.INJECTED, outcome.kind(), outcome.message());
        List<String> touching = outcome.patch().asList().stream().map(PodPatchTest::describe)
                .filter(op -> op.contains(" /metadata/managedFields") || op.contains(" /metadata/namespace")).toList();
        assertEquals(List.of(), touching);
        JsonObject injected = SidecarInjectionTableTest.apply(pod, outcome.patch());
        assertEquals(meta.get("managedFields"), injected.getAsJsonObject("metadata").get("managedFields"));
        assertFalse(injected.getAsJsonObject("metadata").has("namespace"));
    }

    private static JsonObject podWithVolumes(int count) {
        JsonArray volumes = new JsonArray();
        for (int i = 0; i < count; i++) {
            volumes.add(json("{\"name\":\"data-" + i + "\",\"emptyDir\":{}}"));
        }
        JsonObject pod = json("{\"metadata\":{\"name\":\"big\"},\"spec\":{}}");
        pod.getAsJsonObject("spec").add("volumes", volumes);
        return pod;
    }

    private static JsonObject json(String text) {
        return JsonParser.parseString(text).getAsJsonObject();
    }

    static String describe(JsonElement op) {
        return op.getAsJsonObject().get("op").getAsString() + " " + op.getAsJsonObject().get("path").getAsString();
    }
}
