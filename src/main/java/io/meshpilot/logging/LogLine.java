package io.meshpilot.logging;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * One log line as istiod's zap encoders write it (pkg/log config.go). Text: time, level,
 * scope, caller and message separated by tabs, the scope column left out for the default
 * scope, a stack on the lines below. JSON: {@code level}, {@code time}, {@code scope},
 * {@code caller}, {@code msg}, {@code stack} in zap's key order, absent keys left out (the
 * default scope has no {@code scope} key in istiod either). The time is UTC with microseconds,
 * as istiod's formatDate.
 *
 * @param time   when the record was made
 * @param level  istiod's level of the record
 * @param scope  the scope name
 * @param caller {@code package/File.java:line}, or null
 * @param msg    the formatted message
 * @param stack  a stack trace (of the thrown exception, or of the log call), or null
 */
public record LogLine(Instant time, LogLevel level, String scope, String caller, String msg, String stack) {

    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'")
            .withZone(ZoneOffset.UTC);

    /** istiod's console encoding, ending in a newline. */
    public String text() {
        StringBuilder b = new StringBuilder(64 + msg.length());
        b.append(TIME.format(time)).append('\t').append(level.label()).append('\t');
        if (!scope.equals(LogScopes.DEFAULT)) {
            b.append(scope).append('\t');
        }
        if (caller != null) {
            b.append(caller).append('\t');
        }
        b.append(msg).append('\n');
        if (stack != null) {
            b.append(stack);
            if (!stack.endsWith("\n")) {
                b.append('\n');
            }
        }
        return b.toString();
    }

    /** istiod's JSON encoding: one object, ending in a newline. */
    public String json() {
        StringBuilder b = new StringBuilder(96 + msg.length());
        b.append("{\"level\":\"").append(level.label()).append("\",\"time\":\"").append(TIME.format(time)).append('"');
        if (!scope.equals(LogScopes.DEFAULT)) {
            field(b, "scope", scope);
        }
        if (caller != null) {
            field(b, "caller", caller);
        }
        field(b, "msg", msg);
        if (stack != null) {
            field(b, "stack", stack);
        }
        return b.append("}\n").toString();
    }

    private static void field(StringBuilder b, String key, String value) {
        b.append(",\"").append(key).append("\":\"");
        escape(b, value);
        b.append('"');
    }

    private static void escape(StringBuilder b, String s) {
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> b.append("\\\"");
                case '\\' -> b.append("\\\\");
                case '\n' -> b.append("\\n");
                case '\r' -> b.append("\\r");
                case '\t' -> b.append("\\t");
                default -> {
                    if (c < 0x20 || c == '\u2028' || c == '\u2029') {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
                }
            }
        }
    }
}
