package io.meshpilot.config.yaml;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a YAML stream into its documents as text, at the {@code ---} lines that start them,
 * so that a re-read file's unchanged documents can be recognised by their text without
 * being parsed again. A {@code ---} at the start of a line always starts a document: YAML
 * forbids one inside any scalar. Streams with directives ({@code %YAML}) or document-end
 * markers ({@code ...}) are not cut (their documents depend on what precedes them).
 */
public final class YamlDocuments {
    private YamlDocuments() {
    }

    /**
     * One document's text, with its first line's 0-based number in the stream. It starts with
     * its {@code ---} line, if it has one, and ends before the next.
     */
    public record Part(int firstLine, String text) {
    }

    /** The stream's documents as text, in order; null when the stream is not cut (see above). */
    public static List<Part> split(String text) {
        List<Part> parts = new ArrayList<>();
        int partStart = 0;
        int partLine = 0;
        int line = 0;
        int at = 0;
        while (at < text.length()) {
            int end = text.indexOf('\n', at);
            int next = end < 0 ? text.length() : end + 1;
            char c = text.charAt(at);
            if (c == '%' || (c == '.' && marker(text, at, '.'))) {
                return null;
            }
            if (c == '-' && marker(text, at, '-') && at > partStart) {
                parts.add(new Part(partLine, text.substring(partStart, at)));
                partStart = at;
                partLine = line;
            }
            at = next;
            line++;
        }
        if (partStart < text.length() || parts.isEmpty()) {
            parts.add(new Part(partLine, text.substring(partStart)));
        }
        return parts;
    }

    /** Whether a line starts with three {@code c} followed by a blank or the end of the line. */
    private static boolean marker(String text, int at, char c) {
        if (at + 3 > text.length() || text.charAt(at + 1) != c || text.charAt(at + 2) != c) {
            return false;
        }
        if (at + 3 == text.length()) {
            return true;
        }
        char after = text.charAt(at + 3);
        return after == ' ' || after == '\t' || after == '\n' || after == '\r';
    }
}
