package io.meshpilot.config.schema;

import io.meshpilot.config.DocumentError;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.config.yaml.YamlDocuments;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A re-read file's unchanged documents are taken from the previous read by their text; what
 * is parsed again reports the same documents, lines and errors as a parse of the whole text.
 */
class ConfigParserReuseTest {
    private final ConfigParser parser = new ConfigParser(Schemas.PILOT);

    private static String entry(String name, int port) {
        return "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: " + name
                + ", namespace: default}\nspec: {address: 10.0.0.1, ports: {http: " + port + "}}\n";
    }

    @Test
    void unchangedDocumentsAreReusedAndChangedOnesParsed() {
        String v1 = "# services\n" + entry("a", 1) + "---\n" + entry("b", 2) + "---\n" + entry("c", 3);
        ConfigParser.Result first = parser.parse("f.yaml", v1);
        assertEquals(3, first.configs().size());
        assertEquals(3, first.reusable().size());

        String v2 = "# services\n" + entry("a", 1) + "---\n" + entry("b", 20) + "---\n" + entry("c", 3);
        ConfigParser.Result second = parser.parse("f.yaml", v2, first.reusable());
        assertEquals(parser.parse("f.yaml", v2).configs(), second.configs());
        assertSame(first.configs().get(0), second.configs().get(0));
        assertNotSame(first.configs().get(1), second.configs().get(1));
        assertSame(first.configs().get(2), second.configs().get(2));
        assertEquals(3, second.reusable().size());
    }

    @Test
    void errorsAfterReusedDocumentsKeepTheirIndexAndLine() {
        String good = entry("a", 1) + "---\n" + entry("b", 2) + "---\n";
        ConfigParser.Result first = parser.parse("f.yaml", good + entry("c", 3));
        String bad = good + "apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: c}\n"
                + "spec:\n  address: 10.0.0.1\n  ports: {http: 99999}\n";
        ConfigParser.Result reused = parser.parse("f.yaml", bad, first.reusable());
        ConfigParser.Result whole = parser.parse("f.yaml", bad);
        assertEquals(whole.errors(), reused.errors());
        assertEquals(1, reused.errors().size());
        DocumentError e = reused.errors().get(0);
        assertEquals(2, e.document());
        assertEquals(16, e.line(), e.toString()); // the ports line, counted in the whole file
        assertEquals(2, reused.reusable().size(), "a rejected document is not kept for reuse");
    }

    @Test
    void aSyntaxErrorInAChangedDocumentMakesTheFileUnreadableWithItsLine() {
        String good = entry("a", 1) + "---\n" + entry("b", 2);
        ConfigParser.Result first = parser.parse("f.yaml", good);
        ConfigParser.Result broken = parser.parse("f.yaml", entry("a", 1) + "---\nkind: [unclosed\n", first.reusable());
        assertTrue(broken.unreadable());
        assertEquals(parser.parse("f.yaml", entry("a", 1) + "---\nkind: [unclosed\n").errors(), broken.errors());
    }

    @Test
    void streamsAreCutAtDocumentStartsOnly() {
        List<YamlDocuments.Part> parts = YamlDocuments.split("a: 1\n--- \nb: |\n  ---x\n---\nc: 2\n");
        assertEquals(List.of(new YamlDocuments.Part(0, "a: 1\n"), new YamlDocuments.Part(1, "--- \nb: |\n  ---x\n"),
                new YamlDocuments.Part(4, "---\nc: 2\n")), parts);
        assertEquals(List.of(new YamlDocuments.Part(0, "---\na: 1")), YamlDocuments.split("---\na: 1"));
        assertEquals(1, YamlDocuments.split("----\na: 1\n").size(), "four dashes start no document");
        assertNull(YamlDocuments.split("%YAML 1.1\n---\na: 1\n"));
        assertNull(YamlDocuments.split("a: 1\n...\n---\nb: 2\n"));
        assertNull(YamlDocuments.split("a: 1\r---\nb: 2\n"), "a line break the splitter does not count");
        assertEquals(2, YamlDocuments.split("a: 1\r\n---\r\nb: 2\r\n").size());
        assertEquals(List.of(new YamlDocuments.Part(0, "")), YamlDocuments.split(""));
    }

    @Test
    void theAliasLimitCountsOverTheWholeFile() {
        // each document alone stays under SnakeYAML's limit of aliases; the file does not
        StringBuilder file = new StringBuilder();
        for (int d = 0; d < 3; d++) {
            file.append("apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\nmetadata: {name: w").append(d)
                    .append("}\nspec:\n  address: 10.0.0.1\n  labels: &l {a: b}\n");
            for (int i = 0; i < 20; i++) {
                file.append("  x").append(i).append(": [*l]\n");
            }
            file.append("---\n");
        }
        assertNull(YamlDocuments.split(file.toString()), "a stream with anchors is parsed whole");
        ConfigParser.Result r = parser.parse("f.yaml", file.toString());
        assertTrue(r.unreadable(), r.errors().toString());
        assertTrue(r.errors().get(0).reason().contains("aliases"), r.errors().toString());
    }

    @Test
    void textThatIsNotCutIsParsedWholeAndOffersNothingForReuse() {
        ConfigParser.Result r = parser.parse("f.yaml", "%YAML 1.1\n---\n" + entry("a", 1));
        assertEquals(1, r.configs().size());
        assertTrue(r.reusable().isEmpty());
        assertFalse(r.unreadable());
        assertEquals(1, parser.parse("f.yaml", "%YAML 1.1\n---\n" + entry("a", 1), Map.of()).configs().size());
    }
}
