package io.meshpilot.logging;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * istiod's logging on top of java.util.logging: installs the scope-aware handler as the only
 * root handler, sets the scopes' levels from the flags, and hands back the live scopes for
 * ControlZ. Closing puts the previous handlers and levels back (tests install and remove it
 * within one JVM).
 */
public final class IstioLogging implements AutoCloseable {
    private final LiveScopes scopes;
    private final IstioLogHandler handler;
    private final List<Handler> previousHandlers;
    private final Map<Logger, Level> previousLevels;

    private IstioLogging(LiveScopes scopes, IstioLogHandler handler, List<Handler> previousHandlers,
                         Map<Logger, Level> previousLevels) {
        this.scopes = scopes;
        this.handler = handler;
        this.previousHandlers = previousHandlers;
        this.previousLevels = previousLevels;
    }

    /**
     * Opens the targets and takes over the root logger. Throws, naming the flag, when a
     * target cannot be opened; nothing is changed then.
     */
    public static IstioLogging install(LogOptions options) {
        List<LogTarget> targets = new ArrayList<>();
        try {
            for (String t : options.targets()) {
                targets.add(LogTarget.open(t));
            }
        } catch (IllegalArgumentException e) {
            for (LogTarget t : targets) {
                try {
                    t.close();
                } catch (IOException ignored) {
                    // the open failure is the one to report
                }
            }
            throw e;
        }
        Logger root = Logger.getLogger("");
        Map<Logger, Level> levels = new LinkedHashMap<>();
        levels.put(root, root.getLevel());
        for (LogScopes.Scope s : LogScopes.ALL) {
            for (String p : s.loggerPrefixes()) {
                Logger l = Logger.getLogger(p);
                levels.put(l, l.getLevel());
            }
        }
        LiveScopes scopes = new LiveScopes(options);
        IstioLogHandler handler = new IstioLogHandler(scopes, options.json(), targets);
        handler.setLevel(Level.ALL);
        List<Handler> previous = List.of(root.getHandlers());
        for (Handler h : previous) {
            root.removeHandler(h);
        }
        root.addHandler(handler);
        return new IstioLogging(scopes, handler, previous, levels);
    }

    /** The scopes as they are now; changing them changes what is logged. */
    public LiveScopes scopes() {
        return scopes;
    }

    @Override
    public void close() {
        Logger root = Logger.getLogger("");
        root.removeHandler(handler);
        previousHandlers.forEach(root::addHandler);
        previousLevels.forEach(Logger::setLevel);
        handler.close();
    }
}
