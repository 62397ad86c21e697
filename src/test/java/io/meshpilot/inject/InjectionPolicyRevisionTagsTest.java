package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Map;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.Test;

/**
 * Which revision injects a pod when tags are in play, as istiod's webhook configurations select
 * (the revision's own and its tags'): revision {@code b}'s view, with and without tags.
 */
class InjectionPolicyRevisionTagsTest {
    private static final UnaryOperator<String> NO_TAGS = UnaryOperator.identity();
    private static final Map<String, String> TAGS = Map.of("default", "b", "prod", "b", "stable", "a");
    private static final UnaryOperator<String> WITH_TAGS = v -> TAGS.getOrDefault(v, v);

    private static InjectionPolicy.Decision decide(Map<String, String> namespaceLabels, Map<String, String> podLabels,
                                                   UnaryOperator<String> revisionOf) {
        return InjectionPolicy.decide(InjectorConfig.defaults(), "shop", namespaceLabels, podLabels, Map.of(), false, "b",
                revisionOf);
    }

    @Test
    void istioInjectionEnabledBelongsToTheRevisionTheDefaultTagPointsAt() {
        Map<String, String> enabled = Map.of("istio-injection", "enabled");
        InjectionPolicy.Decision withoutTag = decide(enabled, Map.of(), NO_TAGS);
        assertFalse(withoutTag.inject(), "no default tag: the revision named default injects, not b");
        assertEquals("namespace label istio-injection=enabled selects the default revision (default), not b",
                withoutTag.reason());
        assertTrue(decide(enabled, Map.of(), WITH_TAGS).inject(), "the default tag points at b");
        assertTrue(decide(Map.of(), Map.of("sidecar.istio.io/inject", "true"), WITH_TAGS).inject(),
                "an opted-in pod in an unlabelled namespace: the default tag's webhook selects it");
    }

    @Test
    void aRevisionLabelNamingATagBelongsToTheTagsRevision() {
        assertTrue(decide(Map.of("istio.io/rev", "prod"), Map.of(), WITH_TAGS).inject());
        InjectionPolicy.Decision other = decide(Map.of("istio.io/rev", "stable"), Map.of(), WITH_TAGS);
        assertFalse(other.inject());
        assertEquals("namespace label istio.io/rev=stable is another revision (a)", other.reason());
        assertTrue(decide(Map.of(), Map.of("istio.io/rev", "prod"), WITH_TAGS).inject(), "the pod's label, too");
        assertFalse(decide(Map.of("istio.io/rev", "prod"), Map.of(), NO_TAGS).inject(), "without the tag: not b's");
    }
}
