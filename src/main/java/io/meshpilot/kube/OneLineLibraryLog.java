package io.meshpilot.kube;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Filter;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import java.util.logging.SimpleFormatter;

/**
 * Holds a library's logger to MeshPilot's rule for log lines: a record that carries an
 * exception becomes one line, the message and the cause, at the record's level, and the
 * record with its stack goes to debug (FINE). An interrupt is how a library's worker is
 * stopped, not an error: such a record goes to debug whole.
 *
 * <p>Why: client-java's leader election logs every failed Lease request at ERROR with the
 * whole stack (some 40 lines every retry period while the API server is down), where client-go,
 * which istiod uses, logs one line ({@code error retrieving resource lock ...: ...}); and it
 * logs the interrupt that stops it at ERROR with a stack. It offers no setting for either, so
 * its loggers get this filter (public java.util.logging API).
 */
public final class OneLineLibraryLog implements Filter {
    private static final SimpleFormatter MESSAGES = new SimpleFormatter();
    /** Strong references: java.util.logging forgets the filter of a logger nobody holds. */
    private static final Set<Logger> FILTERED = ConcurrentHashMap.newKeySet();

    private final Logger logger;

    private OneLineLibraryLog(Logger logger) {
        this.logger = logger;
    }

    /** Filters the loggers of these library classes (named after the class, as SLF4J names them); once each. */
    public static void install(Class<?>... sources) {
        for (Class<?> source : sources) {
            Logger logger = Logger.getLogger(source.getName());
            if (FILTERED.add(logger)) {
                logger.setFilter(new OneLineLibraryLog(logger));
            }
        }
    }

    @Override
    public boolean isLoggable(LogRecord record) {
        Throwable thrown = record.getThrown();
        if (thrown == null || record.getLevel().intValue() <= Level.FINE.intValue()) {
            return true;
        }
        String message = MESSAGES.formatMessage(record);
        if (!(thrown instanceof InterruptedException)) {
            logger.log(copy(record, record.getLevel(), message + ": " + KubeErrors.oneLine(thrown), null));
        }
        if (logger.isLoggable(Level.FINE)) {
            logger.log(copy(record, Level.FINE, message, thrown));
        }
        return false; // replaced by the lines above, which pass this filter
    }

    private static LogRecord copy(LogRecord original, Level level, String message, Throwable thrown) {
        LogRecord r = new LogRecord(level, message);
        r.setLoggerName(original.getLoggerName());
        r.setInstant(original.getInstant());
        r.setSourceClassName(original.getSourceClassName());
        r.setSourceMethodName(original.getSourceMethodName());
        r.setLongThreadID(original.getLongThreadID());
        r.setThrown(thrown);
        return r;
    }
}
