package io.meshpilot.security.ca;

import java.nio.file.Path;

/**
 * The CA material on disk cannot be used. The message starts with the file at fault and says
 * why, e.g. {@code "ca-key.pem: not a PEM private key"}; start-up reports it as one line and
 * stops rather than signing with something it does not trust.
 */
public final class CaLoadException extends RuntimeException {
    private final transient Path file;
    private final String reason;

    public CaLoadException(Path file, String reason) {
        this(file, reason, null);
    }

    public CaLoadException(Path file, String reason, Throwable cause) {
        super(file.getFileName() + ": " + reason + " (" + file + ")", cause);
        this.file = file;
        this.reason = reason;
    }

    /** Why, without the file. */
    public String reason() {
        return reason;
    }

    /** The file the problem is in. */
    public Path file() {
        return file;
    }
}
