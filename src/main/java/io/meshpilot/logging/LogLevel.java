package io.meshpilot.logging;

import java.util.Arrays;
import java.util.Optional;
import java.util.logging.Level;

/**
 * istiod's log levels (pkg/log Level), most quiet first, with the java.util.logging threshold
 * each stands for. istiod has no level below debug: every JUL level below INFO (CONFIG, FINE,
 * FINER, FINEST; System.Logger DEBUG and TRACE) prints as {@code debug}.
 */
public enum LogLevel {
    NONE("none", Level.OFF),
    // nothing here logs at fatal; as a threshold it lets nothing through, like none
    FATAL("fatal", Level.OFF),
    ERROR("error", Level.SEVERE),
    WARN("warn", Level.WARNING),
    INFO("info", Level.INFO),
    DEBUG("debug", Level.ALL);

    private final String label;
    private final Level julThreshold;

    LogLevel(String label, Level julThreshold) {
        this.label = label;
        this.julThreshold = julThreshold;
    }

    /** The name istiod's flags and ControlZ use. */
    public String label() {
        return label;
    }

    /** The JUL level a logger of a scope at this level is set to. */
    Level julThreshold() {
        return julThreshold;
    }

    /** Whether a record at {@code level} is written by a scope at this level. */
    boolean admits(Level level) {
        return this != NONE && this != FATAL && level.intValue() >= julThreshold.intValue();
    }

    /** By istiod's name (exact, lower case as istiod spells it). */
    public static Optional<LogLevel> byLabel(String label) {
        return Arrays.stream(values()).filter(l -> l.label.equals(label)).findFirst();
    }

    /** The istiod level a JUL record at {@code level} prints as. */
    static LogLevel of(Level level) {
        int v = level.intValue();
        if (v >= Level.SEVERE.intValue()) {
            return ERROR;
        }
        if (v >= Level.WARNING.intValue()) {
            return WARN;
        }
        return v >= Level.INFO.intValue() ? INFO : DEBUG;
    }

    /** For messages: the accepted names. */
    static String labels() {
        return String.join(", ", Arrays.stream(values()).map(l -> l.label).toList());
    }
}
