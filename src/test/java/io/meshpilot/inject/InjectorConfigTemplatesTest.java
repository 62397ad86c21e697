package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.Map;
import org.junit.jupiter.api.Test;

/** The ConfigMap's templates are kept as written (what /debug/inject shows); the built-in one has no text. */
class InjectorConfigTemplatesTest {
    @Test
    void templatesKeepTheirTextAndTheOlderSingleTemplateIsTheSidecars() {
        InjectorConfig c = InjectorConfig.parse("""
                templates:
                  sidecar: |
                    spec: {}
                  custom: "metadata: {labels: {a: b}}"
                """);
        assertEquals(Map.of("sidecar", "spec: {}\n", "custom", "metadata: {labels: {a: b}}"), c.templates());
        assertEquals(Map.of("sidecar", "spec: {}"), InjectorConfig.parse("template: 'spec: {}'").templates());
        assertEquals(Map.of("sidecar", ""), InjectorConfig.parse("policy: enabled").templates());
        assertEquals(Map.of("sidecar", ""), InjectorConfig.defaults().templates());
    }
}
