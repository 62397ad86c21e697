package io.meshpilot.load;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code bin/load --kubernetes} at its smallest: the stand-in, MeshPilot's jar in Kubernetes
 * mode and the sidecars as processes and streams, as the benchmark runs them. Every change
 * written through the API server must reach every proxy watching its service, each counted once;
 * no timing is asserted.
 */
class KubeLoadIT {
    @TempDir
    Path dir;

    @Test
    void everyEndpointSliceChangeReachesEveryWatchingProxy() throws Exception {
        // 20 services, 6 proxies watching 5 each in blocks: services 0-9 have two watchers, 10-19 one
        KubeLoad.Options o = new KubeLoad.Options(20, 2, 6, 5, 20, 2, false);
        Path report = dir.resolve("report.txt");
        KubeLoad.Result r;
        try (PrintStream out = new PrintStream(Files.newOutputStream(report), true, StandardCharsets.UTF_8)) {
            r = KubeLoad.run(o, dir, out);
        }
        String text = Files.readString(report);
        assertEquals(40, r.changes(), text);
        assertEquals(40, r.changesSeen(), "every change seen by all its watchers:\n" + text);
        assertEquals(60, r.expectedAcks(), "changes 0-9 and 20-29 have two watchers, the others one");
        assertEquals(60, r.acks(), "each watcher counts each change once:\n" + text);
        assertEquals(0, r.writeErrors(), text);
        assertEquals(0, r.failedStreams(), text);
        assertEquals(0, r.nacks(), text);
        assertTrue(r.heapReady() > 0 && r.heapConnected() > 0, text);
        assertTrue(r.ok(), text);
    }
}
