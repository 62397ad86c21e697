package io.meshpilot.logging;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * istiod's logging flags (pkg/log Options), validated: the level, stack-trace level and caller
 * setting of every scope in {@link LogScopes}, JSON or text, and where lines go.
 *
 * @param outputLevels     level per scope, every scope present
 * @param stackTraceLevels level from which a line carries the stack of its log call, every scope present
 * @param callerScopes     scopes whose lines carry the caller's file and line
 * @param json             one JSON object per line instead of istiod's tab-separated text
 * @param targets          stdout, stderr or file paths; every line goes to each
 * @param unknownScopes    scope names the flags gave that no scope has (istiod ignores them too)
 */
public record LogOptions(Map<String, LogLevel> outputLevels, Map<String, LogLevel> stackTraceLevels,
                         Set<String> callerScopes, boolean json, List<String> targets, List<String> unknownScopes) {

    /** istiod's pkg/log OverrideScopeName: every scope. */
    public static final String ALL_SCOPES = "all";

    public LogOptions {
        outputLevels = Map.copyOf(outputLevels);
        stackTraceLevels = Map.copyOf(stackTraceLevels);
        callerScopes = Set.copyOf(callerScopes);
        targets = List.copyOf(targets);
        unknownScopes = List.copyOf(unknownScopes);
    }

    /** istiod's defaults: every scope at its initial level, no stacks, no callers, text to stdout. */
    public static LogOptions defaults() {
        return parse("", "", "", "false", List.of());
    }

    /**
     * Parses the flags as istiod does; throws with the flag, the value and the reason.
     *
     * @param outputLevel     --log_output_level: {@code scope:level,...}; a bare level is the default scope's
     * @param stackTraceLevel --log_stacktrace_level, same syntax
     * @param caller          --log_caller: comma-separated scopes, or {@code all}
     * @param asJson          --log_as_json: a Go boolean (true, false, 1, 0, t, f, ...)
     * @param targets         --log_target, repeatable; empty means stdout
     */
    public static LogOptions parse(String outputLevel, String stackTraceLevel, String caller, String asJson,
                                   List<String> targets) {
        List<String> unknown = new ArrayList<>();
        Map<String, LogLevel> output = initial(s -> s.initialLevel());
        apply("--log_output_level", outputLevel, output, unknown);
        Map<String, LogLevel> stack = initial(s -> LogLevel.NONE);
        apply("--log_stacktrace_level", stackTraceLevel, stack, unknown);

        Set<String> callers = new LinkedHashSet<>();
        for (String s : caller == null ? new String[0] : caller.split(",")) {
            String name = s.trim();
            if (name.isEmpty()) {
                continue;
            }
            if (name.equals(ALL_SCOPES)) {
                LogScopes.ALL.forEach(sc -> callers.add(sc.name()));
            } else if (LogScopes.byName(name).isPresent()) {
                callers.add(name);
            } else {
                unknown.add(name);
            }
        }

        List<String> out = new ArrayList<>();
        for (String t : targets == null ? List.<String>of() : targets) {
            if (t == null || t.isBlank()) {
                throw new IllegalArgumentException("--log_target \"" + t + "\": expected stdout, stderr or a file path");
            }
            out.add(t);
        }
        if (out.isEmpty()) {
            out.add("stdout");
        }
        return new LogOptions(output, stack, callers, goBool("--log_as_json", asJson), out,
                unknown.stream().distinct().toList());
    }

    private static Map<String, LogLevel> initial(Function<LogScopes.Scope, LogLevel> level) {
        Map<String, LogLevel> m = new LinkedHashMap<>();
        LogScopes.ALL.forEach(s -> m.put(s.name(), level.apply(s)));
        return m;
    }

    /** {@code scope:level,scope:level}, left to right, as istiod's processLevels. */
    private static void apply(String flag, String value, Map<String, LogLevel> levels, List<String> unknown) {
        if (value == null || value.isEmpty()) {
            return;
        }
        for (String entry : value.split(",", -1)) {
            String[] pieces = entry.split(":", -1);
            String scope;
            String level;
            if (pieces.length == 1) {
                scope = LogScopes.DEFAULT;
                level = pieces[0];
            } else if (pieces.length == 2) {
                scope = pieces[0];
                level = pieces[1];
            } else {
                throw new IllegalArgumentException(flag + " \"" + value + "\": invalid output level format '" + entry
                        + "' (expected scope:level)");
            }
            LogLevel l = LogLevel.byLabel(level).orElseThrow(() -> new IllegalArgumentException(flag + " \"" + value
                    + "\": invalid output level '" + level + "' (levels: " + LogLevel.labels() + ")"));
            if (scope.equals(ALL_SCOPES)) {
                levels.replaceAll((k, v) -> l);
            } else if (levels.containsKey(scope)) {
                levels.put(scope, l);
            } else {
                unknown.add(scope);
            }
        }
    }

    /** Go's strconv.ParseBool, which pflag's bool flags use. */
    private static boolean goBool(String flag, String value) {
        String v = value == null ? "false" : value;
        return switch (v) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            case "0", "f", "F", "FALSE", "false", "False" -> false;
            default -> throw new IllegalArgumentException(flag + " \"" + value + "\": expected true or false");
        };
    }

    /** The warning for scope names no scope has, or empty. */
    public String unknownScopesWarning() {
        return unknownScopes.isEmpty() ? "" : "unknown log scopes ignored: " + String.join(", ", unknownScopes)
                + " (scopes: " + LogScopes.names() + ", or " + ALL_SCOPES + ")";
    }
}
