package io.meshpilot.logging;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.logging.ErrorManager;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;

/**
 * The root JUL handler of {@code pilot-discovery discovery}: drops what a record's scope does
 * not admit, and writes the rest as istiod would (text or JSON) to every target.
 */
final class IstioLogHandler extends Handler {
    private static final SimpleFormatter MESSAGES = new SimpleFormatter();

    private final LiveScopes scopes;
    private final boolean json;
    private final List<LogTarget> targets;

    IstioLogHandler(LiveScopes scopes, boolean json, List<LogTarget> targets) {
        this.scopes = scopes;
        this.json = json;
        this.targets = List.copyOf(targets);
    }

    @Override
    public void publish(LogRecord record) {
        if (record == null) {
            return;
        }
        LogLine line;
        try {
            line = toLine(record, scopes);
        } catch (RuntimeException e) {
            reportError("cannot format a log record", e, ErrorManager.FORMAT_FAILURE);
            return;
        }
        if (line == null) {
            return;
        }
        byte[] bytes = (json ? line.json() : line.text()).getBytes(StandardCharsets.UTF_8);
        synchronized (this) {
            for (LogTarget t : targets) {
                try {
                    t.write(bytes);
                } catch (IOException | RuntimeException e) {
                    reportError("cannot write to log target " + t, e,
                            ErrorManager.WRITE_FAILURE);
                }
            }
        }
    }

    /** The line for a record, or null when its scope drops it. */
    static LogLine toLine(LogRecord record, LiveScopes scopes) {
        LogScopes.Scope scope = LogScopes.of(record.getLoggerName());
        ScopeSettings s = scopes.get(scope.name());
        if (!s.outputLevel().admits(record.getLevel())) {
            return null;
        }
        String stack = null;
        if (record.getThrown() != null) {
            stack = stackTrace(record.getThrown());
        } else if (s.stackTraceLevel().admits(record.getLevel())) {
            stack = CallSite.stack();
        }
        return new LogLine(record.getInstant(), LogLevel.of(record.getLevel()), scope.name(),
                s.logCallers() ? CallSite.caller() : null, message(record), stack);
    }

    /** The record's message with its parameters filled in, as SimpleFormatter would. */
    static String message(LogRecord record) {
        String m = MESSAGES.formatMessage(record);
        return m == null ? "" : m;
    }

    static String stackTrace(Throwable t) {
        StringWriter w = new StringWriter();
        t.printStackTrace(new PrintWriter(w));
        return w.toString();
    }

    @Override
    public void flush() {
        // every line is flushed as it is written
    }

    @Override
    public synchronized void close() {
        for (LogTarget t : targets) {
            try {
                t.close();
            } catch (IOException e) {
                reportError("cannot close log target " + t, e, ErrorManager.CLOSE_FAILURE);
            }
        }
    }
}
