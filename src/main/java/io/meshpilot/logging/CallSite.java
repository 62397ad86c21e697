package io.meshpilot.logging;

import java.util.List;
import java.util.stream.Collectors;

/**
 * Where a log call was made: the first frame of the publishing thread's stack outside the
 * logging machinery (JUL, System.Logger's bridge, SLF4J's, our handler). JUL hands records
 * to handlers on the caller's thread, so the frame is still on the stack.
 */
final class CallSite {
    private static final List<String> MACHINERY = List.of("java.util.logging.", "sun.util.logging.",
            "jdk.internal.logger.", "java.lang.System$Logger", "org.slf4j.", "io.helidon.logging.",
            IstioLogHandler.class.getName(), CallSite.class.getName());
    private static final StackWalker WALKER = StackWalker.getInstance();

    private CallSite() {
    }

    private static boolean machinery(StackWalker.StackFrame f) {
        String c = f.getClassName();
        for (String m : MACHINERY) {
            if (c.startsWith(m)) {
                return true;
            }
        }
        return false;
    }

    /** {@code package/File.java:line} as zap's short caller ({@code dir/file.go:line}), or null. */
    static String caller() {
        return WALKER.walk(frames -> frames.dropWhile(CallSite::machinery)
                .findFirst().map(CallSite::shortCaller).orElse(null));
    }

    /** The stack of the log call, one frame a line. */
    static String stack() {
        return WALKER.walk(frames -> frames.dropWhile(CallSite::machinery)
                .map(f -> "\tat " + f.toStackTraceElement())
                .collect(Collectors.joining("\n")));
    }

    private static String shortCaller(StackWalker.StackFrame f) {
        String cls = f.getClassName();
        int dot = cls.lastIndexOf('.');
        String pkg = dot < 0 ? "" : cls.substring(0, dot);
        String dir = pkg.substring(pkg.lastIndexOf('.') + 1);
        String file = f.getFileName() != null ? f.getFileName() : cls.substring(dot + 1);
        return (dir.isEmpty() ? "" : dir + "/") + file + ":" + f.getLineNumber();
    }
}
