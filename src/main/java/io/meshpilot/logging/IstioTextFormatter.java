package io.meshpilot.logging;

import java.util.logging.Formatter;
import java.util.logging.LogRecord;

/**
 * istiod's text line for a JUL handler configured in logging.properties (the commands other than
 * {@code discovery}, and anything logged before the flags are read): UTC time, level, scope,
 * message.
 */
public final class IstioTextFormatter extends Formatter {
    @Override
    public String format(LogRecord record) {
        return new LogLine(record.getInstant(), LogLevel.of(record.getLevel()),
                LogScopes.of(record.getLoggerName()).name(), null, IstioLogHandler.message(record),
                record.getThrown() == null ? null : IstioLogHandler.stackTrace(record.getThrown())).text();
    }
}
