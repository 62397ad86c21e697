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

    /**
     * One timed step: the component it belongs to, its own name (the component's label for
     * the component's main step), when, how long, and what it reported.
     */
    public record ComponentStart(Component component, String name, Instant startedAt, double millis, String detail) {
    }

    /** What a component's start reports for its log line. */
    @FunctionalInterface
    public interface StartAction {
        String start() throws Exception;
    }

    /** What a step built, and what it reports for its log line. */
    public record Built<T>(T value, String detail) {
    }

    /** A step that builds a value. */
    @FunctionalInterface
    public interface BuildAction<T> {
        Built<T> build() throws Exception;
    }

    private final List<ComponentStart> starts = new ArrayList<>();
    private final Instant createdAt = Instant.now();

    /** The component's main step, named after it. */
    public void run(Component component, StartAction action) {
        run(component, component.label(), action);
    }

    public void run(Component component, String name, StartAction action) {
        build(component, name, () -> new Built<>(null, action.start()));
    }

    /** The component's main step, building a value. */
    public <T> T build(Component component, BuildAction<T> action) {
        return build(component, component.label(), action);
    }

    /** Times a step that builds a value and returns the value; any failure names the component. */
    public <T> T build(Component component, String name, BuildAction<T> action) {
        Instant at = Instant.now();
        long t0 = System.nanoTime();
        Built<T> built;
        try {
            built = action.build();
        } catch (ComponentStartException e) {
            throw e;
        } catch (Exception e) {
            throw new ComponentStartException(component, oneLine(e), e);
        }
        completed(component, name, at, (System.nanoTime() - t0) / 1e6, built.detail());
        return built.value();
    }

    /** Records a step that was timed by its caller (one spanning several steps, or one whose failures pass as they are). */
    public void completed(Component component, Instant at, double ms, String detail) {
        completed(component, component.label(), at, ms, detail);
    }

    public void completed(Component component, String name, Instant at, double ms, String detail) {
        synchronized (starts) {
            starts.add(new ComponentStart(component, name, at, ms, detail));
        }
        LOG.log(Level.INFO, () -> String.format("component=%s started in %.1f ms%s", name, ms,
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
