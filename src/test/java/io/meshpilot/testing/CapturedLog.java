package io.meshpilot.testing;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/**
 * The records of one logger (a class's, or a package's and those under it), captured without
 * printing (test logs stay quiet) from INFO up; closing puts the logger back as it was.
 */
public final class CapturedLog extends Handler implements AutoCloseable {
    private final Logger logger;
    private final Level level;
    private final boolean parents;
    private final List<String> lines = new CopyOnWriteArrayList<>();
    private final List<String> withStack = new CopyOnWriteArrayList<>();

    public CapturedLog(Class<?> source) {
        this(source.getName());
    }

    /** A logger by name: a library's package ("io.helidon") takes in the records of every logger under it. */
    public CapturedLog(String loggerName) {
        logger = Logger.getLogger(loggerName);
        level = logger.getLevel();
        parents = logger.getUseParentHandlers();
        logger.setLevel(Level.INFO);
        logger.setUseParentHandlers(false);
        logger.addHandler(this);
    }

    @Override
    public void publish(LogRecord r) {
        String line = r.getLevel() + " " + r.getMessage();
        lines.add(line);
        if (r.getThrown() != null) {
            withStack.add(line + " [" + r.getThrown() + "]");
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
        logger.removeHandler(this);
        logger.setUseParentHandlers(parents);
        logger.setLevel(level);
    }

    /** Whether a line (level, then message) contains every part. */
    public boolean has(String... parts) {
        return lines.stream().anyMatch(l -> Arrays.stream(parts).allMatch(l::contains));
    }

    /** The lines so far. */
    public List<String> lines() {
        return List.copyOf(lines);
    }

    /** The lines whose record carried an exception (printed with its stack trace), with the exception. */
    public List<String> withStack() {
        return List.copyOf(withStack);
    }
}
