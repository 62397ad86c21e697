package io.meshpilot.config.yaml;

import java.util.ArrayList;
import java.util.List;

/**
 * Cuts a YAML stream into its documents as text, at the {@code ---} lines that start them,
 * so that a re-read file's unchanged documents can be recognised by their text without
 * being parsed again. A {@code ---} at the start of a line always starts a document: YAML
 * forbids one inside any scalar. Not cut: streams with directives ({@code %YAML}) or
 * document-end markers ({@code ...}), whose documents depend on what precedes them; streams
 * with an {@code &} (a possible anchor: the YAML alias limit counts over the whole stream, and
 * parsed one by one every document would get the whole allowance); and streams with line
 * breaks other than {@code \n} and {@code \r\n} (the parser counts lines at those too).
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
        if (text.indexOf('&') >= 0 || text.indexOf('\u0085') >= 0 || text.indexOf('\u2028') >= 0
                || text.indexOf('\u2029') >= 0 || loneCarriageReturn(text)) {
            return null;
        }
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

    private static boolean loneCarriageReturn(String text) {
        for (int i = text.indexOf('\r'); i >= 0; i = text.indexOf('\r', i + 1)) {
            if (i + 1 == text.length() || text.charAt(i + 1) != '\n') {
                return true;
            }
        }
        return false;
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
