package io.meshpilot.mesh;

/** A mesh config or networks file that cannot be used: the file, the line and why. */
public final class MeshConfigException extends Exception {
    private final String file;
    private final int line;
    private final String reason;

    public MeshConfigException(String file, int line, String reason) {
        super(file + (line > 0 ? ":" + line : "") + ": " + reason);
        this.file = file;
        this.line = line;
        this.reason = reason;
    }

    public String file() {
        return file;
    }

    public int line() {
        return line;
    }

    public String reason() {
        return reason;
    }
}
