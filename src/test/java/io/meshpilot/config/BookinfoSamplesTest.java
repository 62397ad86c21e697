package io.meshpilot.config;

import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Istio's own bookinfo config loads unchanged; the Kubernetes kinds beside it are skipped. */
class BookinfoSamplesTest {
    static final Path SAMPLES = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath()
            .resolve("src/test/resources/golden/samples"); // Istio's bookinfo samples (GoldenConfigTest: unchanged copies)
    static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    static Stream<Path> samples() throws Exception {
        assertTrue(Files.isDirectory(SAMPLES), "Istio's bookinfo samples are in the repository: " + SAMPLES);
        try (Stream<Path> files = Files.list(SAMPLES)) {
            List<Path> list = files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList();
            assertTrue(list.size() >= 20, list.toString());
            return list.stream();
        }
    }

    @ParameterizedTest
    @MethodSource("samples")
    void loadsWithoutErrors(Path file) throws Exception {
        ConfigParser.Result r = PARSER.parse(file.getFileName().toString(), Files.readString(file));
        assertEquals(List.of(), r.errors(), file.toString());
        if (file.getFileName().toString().equals("bookinfo-kube.yaml")) {
            assertEquals(0, r.configs().size());
            assertEquals(14, r.skipped().size(), "4 Services, 4 ServiceAccounts, 6 Deployments are not Istio config");
        } else {
            assertTrue(r.configs().size() >= 1, file.toString());
            assertEquals(0, r.skipped().size());
        }
    }
}
