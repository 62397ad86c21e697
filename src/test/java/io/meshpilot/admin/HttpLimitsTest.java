package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.HttpLimits;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Curl;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.TestServers;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** What a client can make the HTTP listener hold: bodies past the limit and long URLs get an answer, not memory. */
class HttpLimitsTest {
    static final String PATH = "/api/v1/configs/networking.istio.io/v1/virtualservices/team-a/big";
    static final long GIB = 1024L * 1024 * 1024;

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static int http;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dir);
        http = server.ports().get("http");
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /** The status code of the first response line, or -1 when the connection closed without one. */
    static int status(Socket s) throws IOException {
        BufferedReader r = new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.ISO_8859_1));
        String line = r.readLine();
        return line == null ? -1 : Integer.parseInt(line.split(" ")[1]);
    }

    static Socket connect() throws IOException {
        Socket s = new Socket(InetAddress.getLoopbackAddress(), http);
        s.setSoTimeout(60_000);
        return s;
    }

    @Test
    void aDeclaredGigabyteIsRefusedBeforeItsBodyIsSent() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(("PUT " + PATH + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/yaml\r\n"
                    + "Content-Length: " + GIB + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertEquals(413, status(s));
        }
    }

    /**
     * A chunked body is refused once it passes the limit: the client gets its 413 (or the
     * connection ends) after sending little more than the limit plus what the socket buffers
     * hold, never the whole gigabyte, so the server never held more than the limit.
     */
    @Test
    void aStreamedBodyIsCutOffAtTheLimit() throws Exception {
        long sent = 0;
        int chunk = 64 * 1024;
        byte[] data = new byte[chunk];
        Arrays.fill(data, (byte) 'a');
        byte[] header = (Integer.toHexString(chunk) + "\r\n").getBytes(StandardCharsets.US_ASCII);
        byte[] crlf = "\r\n".getBytes(StandardCharsets.US_ASCII);
        try (Socket s = connect()) {
            s.setSendBufferSize(64 * 1024);
            OutputStream out = s.getOutputStream();
            out.write(("PUT " + PATH + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/yaml\r\n"
                    + "Transfer-Encoding: chunked\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            try {
                while (sent < GIB) {
                    out.write(header);
                    out.write(data);
                    out.write(crlf);
                    sent += chunk;
                }
            } catch (SocketException e) {
                // the server answered and closed: what it had read is all it will read
            }
            int status;
            try {
                status = status(s);
            } catch (SocketException e) {
                status = -1; // reset before the answer could be read; the limit held all the same
            }
            assertTrue(status == 413 || status == -1, "status " + status);
            assertTrue(sent < HttpLimits.MAX_REQUEST_BODY + 64L * 1024 * 1024,
                    "the server kept reading: " + sent + " bytes accepted");
        }
        // and the listener still serves
        assertEquals(200, Http.get(http, "/ready").status());
    }

    /**
     * One byte over the limit, announced as curl and kubectl announce large uploads (Expect:
     * 100-continue): the 413 comes before the body is sent. Sending the body regardless would
     * race the server's close against the client's read of the 413 (unread bytes make the
     * close a reset), which says nothing about the limit.
     */
    @Test
    void aBodyJustOverTheLimitGets413BeforeItIsSent() throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(("PUT " + PATH + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/yaml\r\n"
                    + "Expect: 100-continue\r\nContent-Length: " + (HttpLimits.MAX_REQUEST_BODY + 1) + "\r\n\r\n")
                    .getBytes(StandardCharsets.US_ASCII));
            s.getOutputStream().flush();
            assertEquals(413, status(s));
        }
    }

    /**
     * h2c (HTTP/2 without TLS, by prior knowledge, as curl and gRPC clients speak it) on the
     * plaintext listeners: a declared body past the limit gets 413 whatever the path, and a
     * streamed one (no Content-Length) gets 413 where it is read, as over HTTP/1.1.
     */
    @Test
    void aBodyPastTheLimitGets413OverH2cOnTheHttpAndMonitoringListeners() throws Exception {
        Path body = dir.resolve("over-the-limit.yaml");
        try (OutputStream out = Files.newOutputStream(body)) {
            byte[] line = ("# " + "a".repeat(1021) + "\n").getBytes(StandardCharsets.US_ASCII);
            for (long written = 0; written <= HttpLimits.MAX_REQUEST_BODY + 1024 * 1024; written += line.length) {
                out.write(line);
            }
        }
        int monitoring = server.ports().get("monitoring");
        String config = "http://127.0.0.1:" + http + PATH;
        for (String url : List.of(config, "http://127.0.0.1:" + http + "/ready",
                "http://127.0.0.1:" + monitoring + "/metrics", "http://127.0.0.1:" + monitoring + "/version")) {
            assertEquals("2 413", h2c(null, "-T", body.toString(), url), url + " declared");
        }
        assertEquals("2 413", h2c(body, "-T", "-", config), config + " streamed");
        assertEquals(200, Http.get(http, "/ready").status(), "and the listener still serves");
    }

    /**
     * A PUT over h2c; the protocol version and status, as curl prints them. Helidon may reset
     * the stream of a refused upload once its answer is sent (the rest of the body is not
     * wanted); curl then ends with exit 92 after printing the answer it got, which counts.
     */
    private static String h2c(Path stdin, String... args) {
        List<String> all = new ArrayList<>(List.of("--http2-prior-knowledge", "-H", "Content-Type: application/yaml",
                "-o", "/dev/null", "-w", "\n%{http_version} %{http_code}"));
        all.addAll(List.of(args));
        Curl.Result r = Curl.run(stdin, all.toArray(String[]::new));
        String printed = r.output().strip().lines().reduce((a, b) -> b).orElse("");
        boolean answered = r.exit() == 0 || (r.exit() == CURL_HTTP2_STREAM_ERROR && !printed.endsWith(" 000"));
        return answered ? printed : "curl exit " + r.exit() + ": " + r.output();
    }

    /** curl's "HTTP/2 stream was not closed cleanly". */
    private static final int CURL_HTTP2_STREAM_ERROR = 92;

    /**
     * A client that leaves before a large answer is written (a heap profile, half a MB): one
     * INFO line with the request and the cause; no ERROR and no stack from Jersey.
     */
    @Test
    void aClientLeavingEarlyIsOneLineWithTheCause() throws Exception {
        try (CapturedLog jersey = new CapturedLog("org.glassfish.jersey");
             CapturedLog ours = new CapturedLog(ClientGoneInterceptor.class)) {
            for (int i = 0; i < 3; i++) {
                try (Socket s = new Socket()) {
                    s.setReceiveBufferSize(4096);
                    s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), http));
                    s.getOutputStream().write("GET /debug/pprof/heap HTTP/1.1\r\nHost: localhost\r\n\r\n"
                            .getBytes(StandardCharsets.US_ASCII));
                    s.getInputStream().readNBytes(100);
                    s.setSoLinger(true, 0); // gone at once: a reset, as a killed client's
                }
            }
            // A write fails, and so a line is written, only when the reset comes before the
            // kernel has taken the whole answer: how much loopback buffers take varies (in the
            // whole suite all three answers were once taken, with no line). So: at most one
            // line per client, each naming the request and the cause, never an ERROR or a
            // stack from Jersey; and at least one client seen, or the kernel took every answer.
            try {
                Await.until("a line for each of the three clients", Duration.ofSeconds(30),
                        () -> ours.lines().size() + jersey.lines().size() >= 3);
            } catch (AssertionError everyAnswerTaken) {
                System.err.println("HttpLimitsTest: " + ours.lines().size() + " of 3 early leavers logged: "
                        + everyAnswerTaken.getMessage());
            }
            assertEquals(List.of(), jersey.lines().stream().filter(l -> !l.startsWith("INFO")).toList());
            assertTrue(ours.lines().size() <= 3, ours.lines().toString());
            assertTrue(ours.lines().stream().allMatch(l -> l.startsWith("INFO GET /debug/pprof/heap from 127.0.0.1:")
                    && l.contains("the client went away before the answer was written: ")), ours.lines().toString());
        }
        assertEquals(200, Http.get(http, "/ready").status());
    }

    @Test
    void everyUrlIsAnsweredAndLongOnesGet414() throws Exception {
        for (int length : new int[] {5_000, 10_000, 20_000, 100_000}) {
            int status;
            try (Socket s = connect()) {
                try {
                    s.getOutputStream().write(("GET /debug/" + "x".repeat(length) + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
                            .getBytes(StandardCharsets.US_ASCII));
                    s.getOutputStream().flush();
                } catch (SocketException e) {
                    // answered and closed before the whole line was sent
                }
                status = status(s);
            }
            if (length > HttpLimits.MAX_REQUEST_LINE) {
                assertEquals(414, status, "a URL of " + length + " characters");
            } else {
                assertEquals(404, status, "a URL of " + length + " characters (no such debug page)");
            }
        }
    }
}
