package io.meshpilot.logging;

import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The current settings of every scope, and the JUL logger levels that follow them: a scope's
 * prefixes get its level (so a record a scope would drop is not even made), the default scope
 * sets the root logger. Loggers that logging.properties gives a level of their own (library
 * noise) keep it below the default scope's level; the handler still drops what their scope does
 * not admit.
 */
public final class LiveScopes {
    private final Map<String, ScopeSettings> settings = new ConcurrentHashMap<>();
    /** Strong references: JUL forgets the level of a logger nobody holds. */
    private final Map<String, Logger> prefixLoggers = new LinkedHashMap<>();

    LiveScopes(LogOptions options) {
        for (LogScopes.Scope s : LogScopes.ALL) {
            for (String p : s.loggerPrefixes()) {
                prefixLoggers.put(p, Logger.getLogger(p));
            }
            set(s.name(), new ScopeSettings(options.outputLevels().get(s.name()),
                    options.stackTraceLevels().get(s.name()), options.callerScopes().contains(s.name())));
        }
    }

    /** The settings of a scope of {@link LogScopes#ALL}. */
    public ScopeSettings get(String scope) {
        ScopeSettings s = settings.get(scope);
        if (s == null) {
            throw new IllegalArgumentException("unknown scope name: " + scope);
        }
        return s;
    }

    /** Changes a scope; its loggers follow at once. */
    public synchronized void set(String scope, ScopeSettings s) {
        LogScopes.Scope sc = LogScopes.byName(scope)
                .orElseThrow(() -> new IllegalArgumentException("unknown scope name: " + scope));
        settings.put(scope, s);
        Level threshold = s.outputLevel().julThreshold();
        if (sc.name().equals(LogScopes.DEFAULT)) {
            Logger.getLogger("").setLevel(threshold);
        }
        for (String p : sc.loggerPrefixes()) {
            prefixLoggers.get(p).setLevel(threshold);
        }
    }

    /** Every scope with its settings, by name. */
    public Map<LogScopes.Scope, ScopeSettings> snapshot() {
        Map<LogScopes.Scope, ScopeSettings> m = new LinkedHashMap<>();
        List<LogScopes.Scope> sorted = LogScopes.ALL.stream()
                .sorted(Comparator.comparing(LogScopes.Scope::name)).toList();
        sorted.forEach(s -> m.put(s, settings.get(s.name())));
        return m;
    }
}
