package io.meshpilot.logging;

import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/** One {@code --log_target}: stdout, stderr, or a file appended to. */
final class LogTarget implements AutoCloseable {
    private final String name;
    private final OutputStream out;
    private final boolean owned;

    private LogTarget(String name, OutputStream out, boolean owned) {
        this.name = name;
        this.out = out;
        this.owned = owned;
    }

    /** Opens the target; throws naming the flag when a file cannot be opened for appending. */
    static LogTarget open(String target) {
        return switch (target) {
            case "stdout" -> new LogTarget(target, System.out, false);
            case "stderr" -> new LogTarget(target, System.err, false);
            default -> {
                Path p = Path.of(target);
                try {
                    Path parent = p.toAbsolutePath().getParent();
                    if (parent != null && !Files.isDirectory(parent)) {
                        throw new IOException("directory " + parent + " does not exist");
                    }
                    yield new LogTarget(target, new FileOutputStream(p.toFile(), true), true);
                } catch (IOException | SecurityException e) {
                    throw new IllegalArgumentException("--log_target \"" + target + "\": cannot open for appending: "
                            + e.getMessage());
                }
            }
        };
    }

    /** Writes and flushes: a line is on its way before the log call returns, none is lost at exit. */
    void write(byte[] line) throws IOException {
        if (out instanceof PrintStream ps) {
            ps.write(line, 0, line.length);
            ps.flush();
        } else {
            out.write(line);
            out.flush();
        }
    }

    @Override
    public void close() throws IOException {
        if (owned) {
            out.close();
        }
    }

    @Override
    public String toString() {
        return name;
    }
}
