package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * An xDS client stack run as a real process that speaks the phase protocol of
 * {@code src/test/node/xds-client/client.js} and {@code src/test/python/xds-client/client.py}:
 * one phase ({@code COUNT[@HEADER=VALUE][!CODE]}) per stdin line, one JSON result per stdout
 * line; closing stdin ends it. Its stderr (the stack's xDS trace) goes to a file, shown when
 * an assertion fails.
 */
final class ExternalXdsClient implements XdsClientScenario.Client, AutoCloseable {
    /** Long enough for the first phase, whose calls wait for the whole xDS exchange. */
    static final int PHASE_TIMEOUT_SECONDS = 60;

    private final Process process;
    private final Path stderr;
    private final Writer in;
    private final BufferedReader out;

    private ExternalXdsClient(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
        this.in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
        this.out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
    }

    /** Starts {@code pb} with its stderr to {@code stderr}; {@code needs} says what it needs when it cannot start. */
    static ExternalXdsClient start(ProcessBuilder pb, Path stderr, String needs) {
        try {
            return new ExternalXdsClient(pb.redirectError(stderr.toFile()).start(), stderr);
        } catch (IOException e) {
            fail(needs + "; could not run " + pb.command() + ": " + e.getMessage());
            throw new AssertionError(e);
        }
    }

    @Override
    public XdsClientScenario.PhaseResult phase(int calls, Map<String, String> headers, String expect) throws Exception {
        StringBuilder spec = new StringBuilder().append(calls);
        headers.forEach((k, v) -> spec.append('@').append(k).append('=').append(v));
        spec.append('!').append(expect);
        in.write(spec + "\n");
        in.flush();
        CompletableFuture<String> line = CompletableFuture.supplyAsync(() -> {
            try {
                return out.readLine();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        String json;
        try {
            json = line.get(PHASE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            fail("no result for phase " + spec + " within " + PHASE_TIMEOUT_SECONDS + " s" + diagnostics());
            throw new AssertionError(e);
        }
        if (json == null) {
            fail("the client exited (" + process.waitFor() + ") during phase " + spec + diagnostics());
        }
        JsonObject r = JsonParser.parseString(json).getAsJsonObject();
        return new XdsClientScenario.PhaseResult(r.get("ok").getAsInt(), XdsClientScenario.counts(r.getAsJsonObject("backends")),
                XdsClientScenario.counts(r.getAsJsonObject("errors")), r.get("unexpected").getAsInt());
    }

    /** Closes stdin and waits for the exit status (0: every call ended as expected). */
    int finish() throws Exception {
        in.close();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            fail("the client did not exit within 10 s of its stdin closing" + diagnostics());
        }
        return process.exitValue();
    }

    @Override
    public String diagnostics() {
        return tail(stderr);
    }

    @Override
    public void close() {
        process.destroyForcibly();
    }

    /** The NACK-looking lines and the last lines of a client's log. */
    static String tail(Path log) {
        try {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log) : List.of();
            // a NACK is a discovery request whose error_detail has a "message"; the stacks' own
            // failures say "failed", "ended", "error" or "invalid"
            List<String> interesting = lines.stream().filter(l -> l.contains("\"message\"") || l.contains("failed")
                    || l.contains("ADS stream ended") || l.contains("Error") || l.contains("error_detail")
                    || l.contains("Invalid") || l.contains("NACK")).toList();
            List<String> show = new ArrayList<>(interesting.subList(Math.max(0, interesting.size() - 20), interesting.size()));
            show.add("... last lines:");
            show.addAll(lines.subList(Math.max(0, lines.size() - 20), lines.size()));
            return "\n--- " + log + " (" + lines.size() + " lines) ---\n" + String.join("\n", show);
        } catch (IOException e) {
            return "\n(" + log + " unreadable: " + e + ")";
        }
    }
}
