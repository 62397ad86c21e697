package io.meshpilot.util;

/**
 * Text a caller sent, made fit for a log line or an error message: printable ASCII only (a
 * line break cannot forge another log line) and cut short (a caller cannot flood the log).
 */
public final class PrintableText {
    private PrintableText() {
    }

    /** {@code s} with every character outside printable ASCII as '?', cut to {@code maxChars} and "...". */
    public static String clip(String s, int maxChars) {
        StringBuilder b = new StringBuilder();
        for (int i = 0; i < s.length() && i < maxChars; i++) {
            char c = s.charAt(i);
            b.append(c >= 0x20 && c < 0x7f ? c : '?');
        }
        return s.length() > maxChars ? b.append("...").toString() : b.toString();
    }
}
