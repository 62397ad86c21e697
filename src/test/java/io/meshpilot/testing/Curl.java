package io.meshpilot.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The curl CLI (nghttp2 for HTTP/2, OpenSSL for TLS): a client nobody on the team wrote,
 * which opens a new connection per run and sends its request right behind the TLS handshake,
 * as the API server and istioctl's users do.
 */
public final class Curl {
    /** Only a guard against a hung transfer (curl's --max-time), never a performance assertion. */
    private static final long TIMEOUT_SECONDS = 120;

    private Curl() {
    }

    public record Result(int exit, String output) {
    }

    /** Runs {@code curl -sS <args>}, with {@code stdin} as its input when not null. */
    public static Result run(Path stdin, String... args) {
        List<String> cmd = new ArrayList<>(List.of("curl", "-sS", "--max-time", Long.toString(TIMEOUT_SECONDS)));
        cmd.addAll(List.of(args));
        ProcessBuilder b = new ProcessBuilder(cmd).redirectErrorStream(true);
        if (stdin != null) {
            b.redirectInput(stdin.toFile());
        }
        try {
            Process p = b.start();
            if (stdin == null) {
                p.getOutputStream().close();
            }
            byte[] out = p.getInputStream().readAllBytes();
            if (!p.waitFor(TIMEOUT_SECONDS + 10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                throw new IllegalStateException("curl did not end: " + cmd);
            }
            return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot run " + cmd, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
