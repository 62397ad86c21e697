package io.meshpilot.util;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The one label matcher every package uses: istiod's SubsetOf and Kubernetes' selector operators. */
class LabelSelectorTest {

    private static final Map<String, String> POD = Map.of("app", "reviews", "version", "v2");

    @Test
    void aSelectorIsASubsetOnlyWhenEveryEntryIsCarriedWithTheSameValue() {
        assertTrue(LabelSelector.subsetOf(Map.of(), POD), "an empty selector is a subset of anything");
        assertTrue(LabelSelector.subsetOf(Map.of(), Map.of()));
        assertTrue(LabelSelector.subsetOf(Map.of("app", "reviews"), POD));
        assertTrue(LabelSelector.subsetOf(POD, POD));
        assertFalse(LabelSelector.subsetOf(Map.of("app", "ratings"), POD), "same key, other value");
        assertFalse(LabelSelector.subsetOf(Map.of("team", "a"), POD), "a key the labels lack");
        assertFalse(LabelSelector.subsetOf(Map.of("app", "reviews", "version", "v2", "x", "y"), POD),
                "a selector with more entries than the labels");
        assertFalse(LabelSelector.subsetOf(Map.of("app", ""), POD));
        assertFalse(LabelSelector.subsetOf(Map.of("app", "reviews"), Map.of()));
    }

    @Test
    void eachKubernetesOperatorSelectsAsTheApiServerDoes() {
        assertTrue(requirement("version", "In", "v1", "v2").matches(POD));
        assertFalse(requirement("version", "In", "v1").matches(POD));
        assertFalse(requirement("team", "In", "a").matches(POD), "In needs the label");
        assertTrue(requirement("version", "NotIn", "v1").matches(POD));
        assertFalse(requirement("version", "NotIn", "v2").matches(POD));
        assertTrue(requirement("team", "NotIn", "a").matches(POD), "NotIn holds without the label");
        assertTrue(requirement("app", "Exists").matches(POD));
        assertFalse(requirement("team", "Exists").matches(POD));
        assertTrue(requirement("team", "DoesNotExist").matches(POD));
        assertFalse(requirement("app", "DoesNotExist").matches(POD));
    }

    @Test
    void anUnknownOperatorSelectsNothing() {
        assertFalse(LabelSelector.OPERATORS.contains("Gt"), "readers refuse it by this set");
        assertFalse(requirement("app", "Gt", "1").matches(POD));
        assertFalse(requirement("app", "in", "reviews").matches(POD), "operators are case-sensitive");
    }

    @Test
    void labelsAndRequirementsMustAllHold() {
        LabelSelector s = new LabelSelector(Map.of("app", "reviews"), List.of(requirement("version", "NotIn", "v1")));
        assertTrue(s.matches(POD));
        assertFalse(s.matches(Map.of("app", "reviews", "version", "v1")));
        assertFalse(s.matches(Map.of("version", "v2")));
        assertTrue(new LabelSelector(Map.of(), List.of()).matches(Map.of()), "an empty selector selects everything");
        assertTrue(new LabelSelector(Map.of(), List.of()).isEmpty());
        assertFalse(s.isEmpty());
    }

    private static LabelSelector.Requirement requirement(String key, String operator, String... values) {
        return new LabelSelector.Requirement(key, operator, Set.of(values));
    }
}
