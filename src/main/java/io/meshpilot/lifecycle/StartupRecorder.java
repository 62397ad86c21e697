package io.meshpilot.lifecycle;

import java.lang.System.Logger.Level;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Times each component's start, logs one line per component, and keeps the record for
 * {@code /api/v1/server} and the start-up metrics. A failure becomes a
 * {@link ComponentStartException} naming the component and the cause.
 */
public class StartupRecorder {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    /** One component's start: when, how long, and what it reported. */
    public record ComponentStart(Component component, Instant startedAt, double millis, String detail) {
    }

    /** What a component's start reports for its log line. */
    @FunctionalInterface
    public interface StartAction {
        String start() throws Exception;
    }

    private final List<ComponentStart> starts = new ArrayList<>();
    private final Instant createdAt = Instant.now();

    public void run(Component component, StartAction action) {
        Instant at = Instant.now();
        long t0 = System.nanoTime();
        String detail;
        try {
            detail = action.start();
        } catch (ComponentStartException e) {
            throw e;
        } catch (Exception e) {
            throw new ComponentStartException(component, oneLine(e), e);
        }
        double ms = (System.nanoTime() - t0) / 1e6;
        synchronized (starts) {
            starts.add(new ComponentStart(component, at, ms, detail));
        }
        LOG.log(Level.INFO, () -> String.format("component=%s started in %.1f ms%s", component.label(), ms,
                detail == null || detail.isEmpty() ? "" : ": " + detail));
    }

    /** Records a start that was timed by its component (one spanning several observers). */
    public void completed(Component component, Instant at, double ms, String detail) {
        synchronized (starts) {
            starts.add(new ComponentStart(component, at, ms, detail));
        }
        LOG.log(Level.INFO, () -> String.format("component=%s started in %.1f ms%s", component.label(), ms,
                detail == null || detail.isEmpty() ? "" : ": " + detail));
    }

    public List<ComponentStart> starts() {
        synchronized (starts) {
            return List.copyOf(starts);
        }
    }

    public Instant createdAt() {
        return createdAt;
    }

    /** The message of the innermost cause that has one: what actually went wrong. */
    public static String oneLine(Throwable e) {
        Throwable t = e;
        String msg = e.toString();
        while (t != null) {
            if (t.getMessage() != null && !t.getMessage().isBlank()) {
                msg = t.getMessage();
            }
            t = t.getCause() == t ? null : t.getCause();
        }
        return msg.replace('\n', ' ');
    }
}
