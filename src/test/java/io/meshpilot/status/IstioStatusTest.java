package io.meshpilot.status;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.validation.ValidationResult;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The status istiod's status controller leaves: only its own parts change, and only when they differ. */
class IstioStatusTest {
    static final Instant T1 = Instant.parse("2026-01-01T00:00:00Z");
    static final Instant T2 = Instant.parse("2026-01-01T00:00:05Z");

    static JsonObject json(String s) {
        return JsonParser.parseString(s).getAsJsonObject();
    }

    @Test
    void aFirstStatusHasTheConditionAndTheGenerationAsAString() {
        JsonObject s = IstioStatus.desired(new JsonObject(), 3, new Progress(2, 2, 0, ""), null, T1);
        assertEquals(json("""
                {"observedGeneration":"3","conditions":[{"type":"Reconciled","status":"True",
                 "lastProbeTime":"2026-01-01T00:00:00Z","lastTransitionTime":"2026-01-01T00:00:00Z",
                 "message":"2/2 proxies up to date."}]}"""), s);
    }

    @Test
    void anUnchangedConditionKeepsItsTimesSoNothingIsWritten() {
        JsonObject first = IstioStatus.desired(new JsonObject(), 1, new Progress(1, 2, 0, ""), null, T1);
        assertEquals(first, IstioStatus.desired(first, 1, new Progress(1, 2, 0, ""), null, T2));
        JsonObject moved = IstioStatus.desired(first, 1, new Progress(2, 2, 0, ""), null, T2);
        assertEquals(T2.toString(), moved.getAsJsonArray("conditions").get(0).getAsJsonObject()
                .get("lastTransitionTime").getAsString());
    }

    @Test
    void otherConditionsAndFieldsAreKeptInPlace() {
        JsonObject current = json("""
                {"conditions":[{"type":"Accepted","status":"True"},{"type":"Reconciled","status":"True",
                 "message":"1/1 proxies up to date."},{"type":"Programmed","status":"False"}],"extra":{"a":1}}""");
        JsonObject s = IstioStatus.desired(current, 2, new Progress(1, 2, 1, "p1 LDS: bad"), null, T1);
        var conditions = s.getAsJsonArray("conditions");
        assertEquals(3, conditions.size());
        assertEquals("Accepted", conditions.get(0).getAsJsonObject().get("type").getAsString());
        JsonObject reconciled = conditions.get(1).getAsJsonObject();
        assertEquals("False", reconciled.get("status").getAsString());
        assertEquals(IstioStatus.REJECTED, reconciled.get("reason").getAsString());
        assertEquals("1/2 proxies up to date. 1 rejected it: p1 LDS: bad", reconciled.get("message").getAsString());
        assertEquals("Programmed", conditions.get(2).getAsJsonObject().get("type").getAsString());
        assertEquals(current.get("extra"), s.get("extra"));
    }

    @Test
    void noProgressLeavesTheConditionAndMessagesFollowTheWarnings() {
        JsonObject current = json("""
                {"conditions":[{"type":"Reconciled","status":"False","message":"0/1 proxies up to date."}]}""");
        var warning = ValidationMessage.schemaWarning(new ValidationResult.Issue("spec.http[0].mirrorPercent",
                "mirrorPercent is deprecated"));
        JsonObject s = IstioStatus.desired(current, 4, null, List.of(warning), T1);
        assertEquals(current.get("conditions"), s.get("conditions"));
        assertEquals(json("""
                {"type":{"code":"IST0133","name":"SchemaWarning"},"level":"WARNING",
                 "documentationUrl":"https://istio.io/latest/docs/reference/config/analysis/ist0133/?ref=status-controller",
                 "message":"Schema validation warning: spec.http[0].mirrorPercent: mirrorPercent is deprecated"}"""),
                s.getAsJsonArray("validationMessages").get(0));
        JsonObject cleared = IstioStatus.desired(s, 5, null, List.of(), T2);
        assertFalse(cleared.has("validationMessages"));
        assertNotEquals(s, cleared);
    }
}
