package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The mesh config's {@code defaultProviders} as istiod's chart renders it
 * (manifests/charts/istio-control/istio-discovery: _helpers.tpl {@code default-prometheus},
 * configmap.yaml): {@code metrics: [prometheus]} only while {@code telemetry.enabled},
 * {@code telemetry.v2.enabled} and {@code telemetry.v2.prometheus.enabled} hold and the user
 * set no {@code meshConfig.defaultProviders}; a user's {@code defaultProviders} is kept as given,
 * not merged with the chart's. Rendered by Helm itself (helm-java), read from the ConfigMap.
 */
class ChartTelemetryValuesTest {
    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of("the chart's defaults", "", Map.of("metrics", List.of("prometheus"))),
                Arguments.of("telemetry.enabled=false", "telemetry: {enabled: false}", null),
                Arguments.of("telemetry.v2.enabled=false", "telemetry: {v2: {enabled: false}}", null),
                Arguments.of("telemetry.v2.prometheus.enabled=false", "telemetry: {v2: {prometheus: {enabled: false}}}",
                        null),
                Arguments.of("a user's defaultProviders is kept, without the chart's metrics",
                        "meshConfig: {defaultProviders: {accessLogging: [envoy]}}",
                        Map.of("accessLogging", List.of("envoy"))),
                Arguments.of("a user's metrics providers replace prometheus",
                        "meshConfig: {defaultProviders: {metrics: [custom-prometheus]}}",
                        Map.of("metrics", List.of("custom-prometheus"))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void defaultProvidersAsIstiodsChartRendersThem(String name, String values, Map<String, Object> expected)
            throws Exception {
        Path file = Files.writeString(dir.resolve("values.yaml"), values);
        HelmChart.Rendered r = HelmChart.render(file);
        Object mesh = HelmChart.yaml((String) Yamls.at(r.get("ConfigMap", "istio"), "data.mesh"));
        assertEquals(expected, Yamls.at(mesh, "defaultProviders"), name);
    }
}
