package io.meshpilot.bench;

import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Config translation's entry cost: parse + bind + validate throughput of real Istio
 * documents (bookinfo's VirtualServices, DestinationRules, Gateways, ServiceEntries,
 * WorkloadEntries). One operation = one document; the score is documents per second.
 * Run with {@code bin/bench ConfigParse}.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED"})
public class ConfigParseBenchmark {
    private final ConfigParser parser = new ConfigParser(Schemas.PILOT);
    private List<String> documents;
    private String multiDocumentFile;
    private int next;

    @Setup
    public void load() throws Exception {
        Path home = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
        documents = new ArrayList<>();
        for (Path dir : List.of(home.resolve("etc/config/bookinfo"), home.resolve("src/test/resources/golden/samples"))) {
            if (!Files.isDirectory(dir)) {
                continue;
            }
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                    for (String d : Files.readString(f).split("(?m)^---\\s*$")) {
                        if (d.contains("istio.io/")) {
                            documents.add(d);
                        }
                    }
                }
            }
        }
        if (documents.isEmpty()) {
            throw new IllegalStateException("no documents found under " + home);
        }
        multiDocumentFile = String.join("\n---\n", documents);
    }

    /** One document at a time, cycling through the corpus. */
    @Benchmark
    public void parseValidateOneDocument(Blackhole bh) {
        String doc = documents.get(next++ % documents.size());
        ConfigParser.Result r = parser.parse("bench.yaml", doc);
        if (!r.errors().isEmpty()) {
            throw new IllegalStateException(r.errors().toString());
        }
        bh.consume(r);
    }

    /** The whole corpus as one multi-document file; divide the score by the document count. */
    @Benchmark
    public void parseValidateWholeFile(Blackhole bh) {
        bh.consume(parser.parse("bench.yaml", multiDocumentFile));
    }

    public int documentCount() {
        return documents.size();
    }
}
