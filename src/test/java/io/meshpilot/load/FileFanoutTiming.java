package io.meshpilot.load;

import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.file.FileConfigSource;
import io.meshpilot.registry.RecordingUpdates;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The load tool's config change without the file watch and the debounces: the rewrite of
 * one file with 1,000 ServiceEntries and 2,000 WorkloadEntries (every port moves), timed per
 * stage: parse alone, scan (read + parse + store diff; events are delivered meanwhile on the
 * store's thread), the tail after the scan, and the time spent in the registry's handler
 * (ServiceEntryRegistry to a real EndpointIndex). Unlike RegistryBenchmark, which waits for
 * each single update's delivery and so mostly measures the thread handoff, this is the
 * pipelined cost a file rewrite pays. Early rounds are the interesting ones: the server
 * parses the file once at start-up, so the change it measures is its second parse.
 * Arguments: services, WorkloadEntries per service, rounds (default 1000 2 30). Run with
 * {@code java -cp target/test-classes:target/classes:<test classpath> io.meshpilot.load.FileFanoutTiming}.
 */
public final class FileFanoutTiming {
    public static void main(String[] args) throws Exception {
        int services = args.length > 0 ? Integer.parseInt(args[0]) : 1000;
        int endpoints = args.length > 1 ? Integer.parseInt(args[1]) : 2;
        int rounds = args.length > 2 ? Integer.parseInt(args[2]) : 30;
        Path dir = Files.createTempDirectory("fanout");
        Path file = dir.resolve("services.yaml");
        Files.writeString(file, XdsLoad.config(services, endpoints, 19000));
        ConfigParser parser = new ConfigParser(Schemas.PILOT);
        try (FileConfigSource source = new FileConfigSource(dir, parser, Schemas.PILOT.all())) {
            RecordingUpdates updates = new RecordingUpdates();
            ServiceEntryRegistry registry = new ServiceEntryRegistry(source, updates, () -> "cluster.local", "Kubernetes");
            long[] handlerNanos = {0};
            Consumer<ConfigEvent> timed = e -> {
                long h0 = System.nanoTime();
                registry.onConfigEvent(e);
                handlerNanos[0] += System.nanoTime() - h0;
            };
            source.registerEventHandler("ServiceEntry", timed);
            source.registerEventHandler("WorkloadEntry", timed);
            source.run();
            source.awaitEventsDelivered(1, TimeUnit.MINUTES);
            registry.markSynced();
            for (int round = 0; round < rounds; round++) {
                String text = XdsLoad.config(services, endpoints, round % 2 == 0 ? 20000 : 19000);
                long p0 = System.nanoTime();
                parser.parse("services.yaml", text);
                long parse = System.nanoTime() - p0;
                Path tmp = dir.resolve(".services.tmp");
                Files.writeString(tmp, text);
                Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
                updates.pushes.clear();
                handlerNanos[0] = 0;
                long t0 = System.nanoTime();
                FileConfigSource.ScanResult r = source.scan();
                long t1 = System.nanoTime();
                source.awaitEventsDelivered(1, TimeUnit.MINUTES);
                long t2 = System.nanoTime();
                System.out.printf("round %2d: parse %4d ms, scan %4d ms (changed %d), registry+index after scan %4d ms,"
                                + " total %4d ms, pushes %d, in the registry %.1f ms%n", round, parse / 1_000_000, (t1 - t0) / 1_000_000,
                        r.changed().size(), (t2 - t1) / 1_000_000, (t2 - t0) / 1_000_000, updates.pushes.size(),
                        handlerNanos[0] / 1e6);
            }
        }
    }
}
