package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.Yaml;

/**
 * chart/crds/istio-crds.yaml is made from the same source as the test API server's Istio CRDs
 * (MeshPilot's Pilot schemas), so the two cannot drift: this test fails when they differ.
 * After a schema change, rewrite the file with
 * {@code bin/test -Dtest=ChartCrdsTest -Dmeshpilot.writeChartCrds=true ...}.
 */
class ChartCrdsTest {
    static final Path FILE = HelmChart.dir().resolve("crds/istio-crds.yaml");
    static final String HEADER = """
            # Istio's CustomResourceDefinitions for the kinds MeshPilot serves. Generated from MeshPilot's
            # Pilot schemas by ChartCrdsTest (do not edit; see its comment). Their schemas keep every
            # field: Istio's config is validated by the /validate webhook, not by the API server.
            """;

    @Test
    void theChartsCrdsAreTheTestApiServersIstioCrds() throws Exception {
        String expected = render(FakeApiServer.istioCrds());
        if (Boolean.getBoolean("meshpilot.writeChartCrds")) {
            Files.createDirectories(FILE.getParent());
            Files.writeString(FILE, expected);
        }
        assertEquals(expected, Files.readString(FILE),
                "chart/crds differs from the Pilot schemas: regenerate it (see ChartCrdsTest's comment)");
    }

    static String render(List<JsonObject> crds) {
        DumperOptions options = new DumperOptions();
        options.setDefaultFlowStyle(DumperOptions.FlowStyle.BLOCK);
        options.setIndent(2);
        options.setIndicatorIndent(0);
        Yaml yaml = new Yaml(options);
        Gson gson = new Gson();
        return HEADER + crds.stream()
                .map(crd -> "---\n" + yaml.dump(gson.fromJson(crd, Map.class)))
                .collect(Collectors.joining());
    }
}
