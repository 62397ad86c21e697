package io.meshpilot.monitoring;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.PrometheusTextParser.Family;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every component registers its metrics through this package (istiod's pkg/monitoring shape):
 * the names, types and labels Prometheus sees are decided in one place, and the registry's
 * quirks (its close lock, a restarted registry, the counters' suffix) are handled once.
 */
class MetricRegistrationTest {
    @TempDir
    Path dir;

    @Test
    void onlyMonitoringAndTheWiringTalkToHelidonsMetricsApi() {
        noClasses().that().resideInAPackage("io.meshpilot..")
                .and().resideOutsideOfPackages("io.meshpilot.monitoring..", "io.meshpilot.bootstrap..")
                .should().dependOnClassesThat().resideInAPackage("io.helidon.metrics..")
                .because("metrics are registered through io.meshpilot.monitoring")
                .check(new ClassFileImporter().withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                        .importPackages("io.meshpilot"));
    }

    /** The series the components registered straight with Helidon keep their names, types and labels. */
    @Test
    void theComponentsSeriesKeepTheirNamesTypesAndLabels() throws Exception {
        TestServers.copyBookinfo(dir);
        try (MeshPilotServer server = TestServers.start(dir)) {
            Map<String, Family> families = PrometheusTextParser.parse(
                    Http.get(server.ports().get("monitoring"), "/metrics").body());
            for (String gauge : List.of("pilot_services", "xds_cache_size", "pilot_virt_services",
                    "citadel_server_root_cert_expiry_timestamp", "citadel_server_cert_chain_expiry_timestamp",
                    "citadel_server_root_cert_expiry_seconds", "citadel_server_cert_chain_expiry_seconds")) {
                Family f = families.get(gauge);
                assertNotNull(f, gauge + " missing");
                assertEquals("gauge", f.type(), gauge);
                assertEquals(1, f.samples().size(), gauge + ": " + f.samples());
                assertEquals(Map.of(), f.samples().get(0).labels(), gauge + " has no labels");
            }
            assertEquals(4.0, families.get("pilot_services").samples().get(0).value(), "bookinfo's four services");
            assertTrue(families.get("citadel_server_root_cert_expiry_seconds").samples().get(0).value() > 0);

            // a config change while serving: its event is counted in the registry being scraped
            Files.writeString(dir.resolve("config/extra.yaml"), """
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: extra, namespace: default}
                    spec:
                      hosts: [extra.example.com]
                      ports: [{number: 80, name: http, protocol: HTTP}]
                      resolution: DNS
                    """);
            Await.until("the ServiceEntry's event counted", Duration.ofSeconds(20), () -> serviceEntryAdds(
                    PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body())) >= 1);
            families = PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body());
            Family events = families.get("meshpilot_config_events_total");
            assertEquals("counter", events.type());
            assertEquals("Config store events by kind, event and whether they need a push.", events.help());
            events.samples().forEach(s -> assertEquals(Set.of("kind", "event", "push"), s.labels().keySet(), s.toString()));
        }
    }

    static double serviceEntryAdds(Map<String, Family> families) {
        Family events = families.get("meshpilot_config_events_total");
        return events == null ? 0 : events.samples().stream().filter(s -> "ServiceEntry".equals(s.labels().get("kind"))
                && "add".equals(s.labels().get("event")) && "true".equals(s.labels().get("push")))
                .mapToDouble(PrometheusTextParser.Sample::value).sum();
    }
}
