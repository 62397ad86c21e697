package io.meshpilot.config.yaml;

import java.io.StringReader;
import java.util.ArrayList;
import java.util.List;
import org.yaml.snakeyaml.DumperOptions;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.error.MarkedYAMLException;
import org.yaml.snakeyaml.error.YAMLException;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.ScalarNode;
import org.yaml.snakeyaml.nodes.Tag;
import org.yaml.snakeyaml.representer.Representer;

/**
 * Parses YAML (and JSON, which is YAML) into node trees that keep line numbers, with limits
 * that keep hostile input bounded: alias expansion, nesting depth, document size, duplicate
 * keys rejected.
 */
public final class SafeYaml {
    /** Largest document text accepted (characters). */
    public static final int MAX_CHARS = 8 * 1024 * 1024;
    static final int MAX_ALIASES = 50;
    static final int MAX_DEPTH = 64;

    private SafeYaml() {
    }

    static LoaderOptions options() {
        LoaderOptions o = new LoaderOptions();
        o.setAllowDuplicateKeys(false);
        o.setMaxAliasesForCollections(MAX_ALIASES);
        o.setNestingDepthLimit(MAX_DEPTH);
        o.setCodePointLimit(MAX_CHARS);
        o.setAllowRecursiveKeys(false);
        return o;
    }

    /** All documents of a YAML stream; empty documents are dropped, as kubectl does. */
    public static List<Node> documents(String source, String text) throws YamlBindingException {
        if (text.length() > MAX_CHARS) {
            throw new YamlBindingException(source, List.of(new FieldError("", 0, 0,
                    "document is larger than " + MAX_CHARS + " characters")));
        }
        LoaderOptions o = options();
        Yaml yaml = new Yaml(new SafeConstructor(o), new Representer(
                new DumperOptions()), new DumperOptions(), o);
        List<Node> out = new ArrayList<>();
        try {
            for (Node n : yaml.composeAll(new StringReader(text))) {
                // an empty document (a trailing "---", a comment-only part) is no document
                boolean empty = n == null || (n instanceof ScalarNode s
                        && s.getTag().equals(Tag.NULL));
                if (!empty) {
                    out.add(n);
                }
            }
        } catch (MarkedYAMLException e) {
            Mark m = e.getProblemMark() != null ? e.getProblemMark() : e.getContextMark();
            String problem = e.getProblem() != null ? e.getProblem() : e.getMessage();
            String ctx = e.getContext() != null ? e.getContext() + ": " : "";
            throw new YamlBindingException(source, List.of(new FieldError("",
                    m == null ? 0 : m.getLine() + 1, m == null ? 0 : m.getColumn() + 1,
                    "invalid YAML: " + ctx + problem)));
        } catch (YAMLException e) {
            throw new YamlBindingException(source, List.of(new FieldError("", 0, 0, "invalid YAML: " + e.getMessage())));
        }
        return out;
    }
}
