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

    static String describe(JsonElement op) {
        return op.getAsJsonObject().get("op").getAsString() + " " + op.getAsJsonObject().get("path").getAsString();
    }
}
