package io.meshpilot.process;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.meshpilot.testing.ServerProcess;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * bin/pilot-discovery runs the server from the JVM's AOT cache (JDK 25), which its first
 * discovery run after a build trains; later runs reuse it.
 */
class AotCacheIT {
    /** The jar Maven just built is the one to run; the JVM's AOT lines let through. */
    static final Map<String, String> ENV = Map.of("MESHPILOT_SKIP_BUILD", "true", "MESHPILOT_JAVA_OPTS", "-Xlog:aot=info");

    @Test
    void discoveryStartsFromTheAotCacheTrainedOncePerBuild(@TempDir Path dir) throws Exception {
        assumeTrue(Runtime.version().feature() >= 25, "AOT caches need JDK 25");
        String opened = "Opened AOT cache " + ServerProcess.home().resolve("target/meshpilot-jdk");
        try (ServerProcess first = ServerProcess.script(ENV, ProcessLifecycleIT.flags(dir.resolve("first")))) {
            first.await(ProcessLifecycleIT.READY, ProcessLifecycleIT.START);
            assertTrue(first.output().contains(opened), first.output());
        }
        try (ServerProcess second = ServerProcess.script(ENV, ProcessLifecycleIT.flags(dir.resolve("second")))) {
            second.await(ProcessLifecycleIT.READY, ProcessLifecycleIT.START);
            assertTrue(second.output().contains(opened), second.output());
            assertFalse(second.output().contains("training the JVM's AOT cache"), "trained once per build");
        }
    }
}
