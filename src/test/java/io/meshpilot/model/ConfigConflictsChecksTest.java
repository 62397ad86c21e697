package io.meshpilot.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meshpilot.networking.MeshFixture;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The mechanism: a failing check does not stop the others, entries are immutable, exportTo overlap. */
class ConfigConflictsChecksTest {
    static final PushMetric TEST_METRIC = PushMetric.of("meshpilot_test_problem", "A test problem.");

    @Test
    void aFailingCheckIsSkippedAndTheOthersStillRecord() {
        try (MeshFixture f = new MeshFixture()) {
            PushContext push = f.push();
            PushDiagnostics d = ConfigConflicts.detect(push, List.of(
                    (p, out) -> {
                        throw new IllegalStateException("broken check");
                    },
                    (p, out) -> out.add(TEST_METRIC, "some/key", "a message")));
            assertEquals(Map.of("some/key", new PushDiagnostics.Entry("", "a message")), d.entries(TEST_METRIC));
            assertEquals(1, d.count(TEST_METRIC));
            assertThrows(UnsupportedOperationException.class, () -> d.all().clear());
            assertThrows(UnsupportedOperationException.class, () -> d.entries(TEST_METRIC).clear());
            assertSame(PushDiagnostics.EMPTY, push.diagnostics(), "an empty mesh has no problems");
        }
    }

    @Test
    void metricsAreDeclaredOnceAndListed() {
        assertSame(PushMetric.DUPLICATED_DOMAINS, PushMetric.of("pilot_vservice_dup_domain", "other help"));
        assertEquals(true, PushMetric.known().contains(PushMetric.UNDEFINED_SUBSETS));
        assertThrows(IllegalArgumentException.class, () -> PushMetric.of("not a name", "x"));
    }

    @Test
    void exportToAudiencesOverlapAsIstiodVisibility() {
        Set<String> all = ConfigConflicts.audience(List.of(), List.of(), "a");
        assertEquals(null, all);
        assertEquals(Set.of("a"), ConfigConflicts.audience(List.of("."), List.of(), "a"));
        assertEquals(Set.of(), ConfigConflicts.audience(List.of("~"), List.of(), "a"));
        assertEquals(Set.of("a"), ConfigConflicts.audience(List.of(), List.of("."), "a"), "the mesh default");
        assertEquals(true, ConfigConflicts.overlap(null, Set.of("b")));
        assertEquals(false, ConfigConflicts.overlap(null, Set.of()));
        assertEquals(false, ConfigConflicts.overlap(Set.of("a"), Set.of("b")));
        assertEquals(true, ConfigConflicts.overlap(Set.of("a", "b"), Set.of("b")));
    }
}
