package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.testing.ServerProcess;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged jar's CDI beans are found through its Jandex index (META-INF/jandex.idx, written
 * by the build), not by Weld parsing each of its classes at every start: Weld looks for an
 * index in jars only, so only a process running the jar shows it.
 */
class BeanIndexIT {
    @Test
    void weldReadsTheJarsIndexInsteadOfScanningItsClasses(@TempDir Path dir) throws Exception {
        // the jar's own logging setup with Weld's debug lines let through
        String logging;
        try (InputStream in = BeanIndexIT.class.getResourceAsStream("/logging.properties")) {
            logging = new String(in.readAllBytes(), StandardCharsets.UTF_8)
                    .replace("org.jboss.weld.level=WARNING", "org.jboss.weld.level=FINE");
        }
        Path config = Files.writeString(dir.resolve("logging.properties"), logging);
        String jar = System.getProperty("meshpilot.jar", ServerProcess.home().resolve("target/meshpilot.jar").toString());
        try (ServerProcess p = ServerProcess.jar(List.of(), List.of("-Djava.util.logging.config.file=" + config),
                Map.of(), ProcessLifecycleIT.flags(dir, "--log_output_level", "default:debug"))) {
            p.await(ProcessLifecycleIT.READY, ProcessLifecycleIT.START);
            assertTrue(p.output().contains("Jandex index found: " + jar), p.output().lines()
                    .filter(l -> l.contains("Jandex") || l.contains("Bean archive")).toList().toString());
        }
    }
}
