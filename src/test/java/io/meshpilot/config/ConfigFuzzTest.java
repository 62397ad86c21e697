package io.meshpilot.config;

import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.file.FileConfigSource;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Mutated config documents (truncated, wrong types, unknown fields, huge values, random
 * bytes, deep nesting, alias bombs, duplicate keys) never make the loader throw, stay within
 * the size limits, and never disturb good config. Seeded, so a failure reproduces.
 */
class ConfigFuzzTest {
    static final long SEED = 20261121L;
    static final ConfigParser PARSER = new ConfigParser(Schemas.PILOT);

    static List<String> corpus() throws Exception {
        Path home = Path.of(System.getProperty("meshpilot.home", ".")).toAbsolutePath();
        List<String> docs = new ArrayList<>();
        for (Path dir : List.of(home.resolve("etc/config/bookinfo"), home.resolve("src/test/resources/golden/samples"))) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
                    for (String d : Files.readString(f).split("(?m)^---\\s*$")) {
                        if (d.contains("apiVersion")) {
                            docs.add(d.strip() + "\n");
                        }
                    }
                }
            }
        }
        return docs;
    }

    static String mutate(String doc, Random r) {
        String[] lines = doc.split("\n", -1);
        return switch (r.nextInt(14)) {
            case 0 -> doc.substring(0, r.nextInt(doc.length()));
            case 1 -> {
                int i = r.nextInt(doc.length());
                yield doc.substring(0, i) + doc.substring(i + 1);
            }
            case 2 -> {
                int i = r.nextInt(doc.length());
                yield doc.substring(0, i) + "{}[]:-&*!|>'\"%@`#,?\t".charAt(r.nextInt(20)) + doc.substring(i);
            }
            case 3 -> doc.replaceAll(": [a-zA-Z][\\w.-]*", r.nextBoolean() ? ": 12345" : ": [a, b]");
            case 4 -> doc.replaceAll(": \\d+", r.nextBoolean() ? ": \"not-a-number\"" : ": {x: 1}");
            case 5 -> {
                int i = r.nextInt(lines.length);
                String indent = lines[i].replaceAll("^(\\s*).*", "$1");
                lines[i] = lines[i] + "\n" + indent + "unknownField" + r.nextInt(100) + ": true";
                yield String.join("\n", lines);
            }
            case 6 -> doc.replaceFirst("name: [\\w.-]+", "name: " + "x".repeat(100_000 + r.nextInt(1000)));
            case 7 -> doc.replaceFirst(": \\d+", ": 1" + "0".repeat(400));
            case 8 -> {
                byte[] b = new byte[1 + r.nextInt(2000)];
                r.nextBytes(b);
                yield new String(b, StandardCharsets.ISO_8859_1);
            }
            case 9 -> "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: deep}\nspec: "
                    + "[".repeat(500 + r.nextInt(5000)) + "]".repeat(10);
            case 10 -> aliasBomb(5 + r.nextInt(6));
            case 11 -> {
                int i = 1 + r.nextInt(Math.max(1, lines.length - 1));
                yield String.join("\n", lines) + "\n" + lines[Math.min(i, lines.length - 1)];
            }
            case 12 -> {
                int i = r.nextInt(lines.length);
                int j = r.nextInt(lines.length);
                String t = lines[i];
                lines[i] = lines[j];
                lines[j] = t;
                yield String.join("\n", lines);
            }
            default -> doc.replace("  ", r.nextBoolean() ? "\t" : "   ");
        };
    }

    static String aliasBomb(int levels) {
        StringBuilder y = new StringBuilder("apiVersion: networking.istio.io/v1\nkind: VirtualService\n"
                + "metadata: {name: bomb}\nx0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n");
        for (int i = 1; i <= levels; i++) {
            y.append("x").append(i).append(": &a").append(i).append(" [");
            for (int k = 0; k < 9; k++) {
                y.append(k == 0 ? "" : ", ").append("*a").append(i - 1);
            }
            y.append("]\n");
        }
        return y.append("spec:\n  hosts: *a").append(levels).append("\n").toString();
    }

    @Test
    void tenThousandMutatedDocumentsNeverEscape() throws Exception {
        List<String> corpus = corpus();
        assertTrue(corpus.size() > 30, "corpus of real documents: " + corpus.size());
        Random r = new Random(SEED);
        int rejected = 0;
        int loaded = 0;
        for (int i = 0; i < 10_000; i++) {
            String doc = mutate(corpus.get(r.nextInt(corpus.size())), r);
            ConfigParser.Result result;
            try {
                result = PARSER.parse("fuzz-" + i, doc);
            } catch (RuntimeException | StackOverflowError e) {
                throw new AssertionError("case " + i + " escaped: " + e + "\n--- document ---\n"
                        + doc.substring(0, Math.min(2000, doc.length())), e);
            }
            for (DocumentError e : result.errors()) {
                assertFalse(e.reason() == null || e.reason().isBlank(), "case " + i + ": an error needs a reason");
                assertTrue(e.line() >= 0, "case " + i);
            }
            rejected += result.errors().isEmpty() ? 0 : 1;
            loaded += result.configs().size();
        }
        assertTrue(rejected > 5_000, "most mutations are invalid: " + rejected);
        assertTrue(loaded > 100, "some mutations stay valid (e.g. reordered lines): " + loaded);
    }

    @Test
    void limitsHold() {
        ConfigParser.Result bomb = PARSER.parse("bomb", aliasBomb(10));
        assertEquals(0, bomb.configs().size());
        assertTrue(bomb.errors().get(0).reason().matches("(?s).*(alias|expands).*"), bomb.errors().toString());
        ConfigParser.Result deep = PARSER.parse("deep", "a: " + "[".repeat(100_000));
        assertTrue(deep.unreadable(), deep.errors().toString());
        String huge = "apiVersion: networking.istio.io/v1\nkind: VirtualService\nmetadata: {name: big}\nspec: {hosts: ["
                + "\"h\",".repeat(3_000_000) + "]}";
        ConfigParser.Result big = PARSER.parse("big", huge);
        assertTrue(big.unreadable() && big.errors().get(0).reason().contains("larger than"), big.errors().toString());
    }

    /** Mutations of one file while another stays: the good file's objects never change. */
    @Test
    void goodConfigIsUntouchedWhileAFileIsMangled(@TempDir Path dir) throws Exception {
        List<String> corpus = corpus();
        Path good = dir.resolve("good.yaml");
        Files.writeString(good, String.join("---\n", corpus.subList(0, 5)));
        Path victim = dir.resolve("victim.yaml");
        try (FileConfigSource source = new FileConfigSource(dir, PARSER, Schemas.PILOT.all())) {
            source.scan();
            List<Config> before = all(source, "good.yaml");
            assertEquals(5, before.size());
            Random r = new Random(SEED + 1);
            for (int i = 0; i < 400; i++) {
                Files.writeString(victim, mutate(corpus.get(5 + r.nextInt(corpus.size() - 5)), r));
                source.scan();
                assertEquals(before, all(source, "good.yaml"), "after mutation " + i);
            }
        }
    }

    private static List<Config> all(FileConfigSource source, String file) {
        List<Config> out = new ArrayList<>();
        for (Schema s : Schemas.PILOT.all()) {
            for (Config c : source.list(s.kind(), null)) {
                if (source.sourceOf(c.key()).map(file::equals).orElse(false)) {
                    out.add(c);
                }
            }
        }
        return out;
    }
}
