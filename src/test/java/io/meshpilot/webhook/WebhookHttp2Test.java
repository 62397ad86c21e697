package io.meshpilot.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.Curl;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.net.http.HttpClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook listener (15017) as the API server calls it: HTTP/2 over TLS. A body past the
 * listener's limit is refused with 413 without being held, as over HTTP/1.1; reviews are
 * answered and counted whatever the timing of a new connection's first request.
 */
class WebhookHttp2Test {
    static final long MIB = 1024L * 1024;

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static AdmissionClient api;
    static Path caBundle;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dir);
        String pem = server.server().components().certificates().trustBundle().pem();
        api = new AdmissionClient(pem, server.ports().get("webhook"));
        caBundle = Files.writeString(dir.resolve("ca.pem"), pem);
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
    }

    /**
     * 400 MB streamed over HTTP/2 to /validate (no Content-Length, as a chunked upload): 413,
     * and the server holds no more than the limit. Measured as the growth of the old
     * generation, where a body read whole lands (arrays this large are allocated there
     * directly); the frames the server reads and drops after its answer are short-lived.
     */
    @Test
    void a400MbBodyOverHttp2IsRefusedWithoutBeingHeld() {
        MemoryPoolMXBean old = ManagementFactory.getMemoryPoolMXBeans().stream()
                .filter(p -> p.getType() == MemoryType.HEAP && p.getName().contains("Old Gen")).findFirst().orElseThrow();
        System.gc();
        long before = old.getUsage().getUsed();
        AtomicLong peak = new AtomicLong(before);
        AtomicBoolean uploading = new AtomicBoolean(true);
        Thread sampler = Thread.ofPlatform().start(() -> {
            while (uploading.get()) {
                peak.accumulateAndGet(old.getUsage().getUsed(), Math::max);
                try {
                    Thread.sleep(5);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        AdmissionClient.Reply r;
        try {
            r = api.postStream("/validate", review(400 * MIB), "application/json");
        } finally {
            uploading.set(false);
        }
        try {
            sampler.join();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        assertEquals(413, r.status(), r.body());
        assertEquals(HttpClient.Version.HTTP_2, r.version());
        long grown = peak.get() - before;
        assertTrue(grown < 64 * MIB, "the old generation grew by " + grown / MIB + " MiB during the upload");
    }

    /** Past the limit by a MiB, declared (Content-Length) or streamed: 413 on every webhook path. */
    @Test
    void everyWebhookPathAnswers413PastTheLimitDeclaredOrStreamed() {
        long size = HttpLimits.MAX_REQUEST_BODY + MIB;
        for (String path : List.of("/validate", "/validate/networking", "/inject", "/inject/cluster/c1/net/n1")) {
            assertEquals(413, api.postStream(path, review(size), "application/json").status(), path + " streamed");
            assertEquals(413, api.postSized(path, review(size), size, "application/json").status(), path + " declared");
        }
        assertEquals(200, api.admit("/validate", AdmissionClient.review("v1", "CREATE", AdmissionClient.json("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: r, namespace: default}
                spec: {host: reviews}
                """).get(0), false)).status(), "and the listener still serves");
    }

    /**
     * 1,000 injection reviews over HTTP/2 with TLS, each on a new connection (curl, whose
     * request follows the handshake at once): every one is answered 200, counted in
     * sidecar_injection_success_total, and Helidon logs no warning.
     */
    @Test
    void aThousandReviewsOverHttp2WithTlsAreAnsweredAndCounted() throws Exception {
        Path body = Files.writeString(dir.resolve("inject-review.json"), podReview());
        String url = "https://localhost:" + server.ports().get("webhook") + "/inject";
        double successBefore = metric("sidecar_injection_success_total");
        Map<String, Integer> statuses = new ConcurrentHashMap<>();
        AtomicInteger next = new AtomicInteger();
        int reviews = 1_000;
        try (CapturedLog helidon = new CapturedLog("io.helidon");
             ExecutorService callers = Executors.newFixedThreadPool(4)) {
            List<Future<?>> running = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                running.add(callers.submit(() -> {
                    while (next.getAndIncrement() < reviews) {
                        Curl.Result r = Curl.run(null, "--http2", "--cacert", caBundle.toString(),
                                "-H", "Content-Type: application/json", "--data-binary", "@" + body,
                                "-o", "/dev/null", "-w", "%{http_version} %{http_code}", url);
                        statuses.merge(r.exit() == 0 ? r.output().trim() : "curl exit " + r.exit() + ": " + r.output(),
                                1, Integer::sum);
                    }
                }));
            }
            for (Future<?> f : running) {
                f.get();
            }
            List<String> warnings = helidon.lines().stream()
                    .filter(l -> l.startsWith("WARNING") || l.startsWith("SEVERE")).toList();
            assertEquals(List.of(), warnings.stream().limit(3).toList(), warnings.size() + " warnings");
        }
        assertEquals(Map.of("2 200", reviews), statuses);
        assertEquals(successBefore + reviews, metric("sidecar_injection_success_total"));
    }

    private static double metric(String name) {
        var family = PrometheusTextParser.parse(Http.get(server.ports().get("monitoring"), "/metrics").body()).get(name);
        return family == null ? 0 : family.samples().get(0).value();
    }

    /** An AdmissionReview of {@code size} bytes: a Gateway whose annotation is the padding. */
    static InputStream review(long size) {
        byte[] head = ("{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u1\","
                + "\"operation\":\"CREATE\",\"object\":{\"apiVersion\":\"networking.istio.io/v1\",\"kind\":\"Gateway\","
                + "\"metadata\":{\"name\":\"g\",\"annotations\":{\"pad\":\"").getBytes(StandardCharsets.UTF_8);
        byte[] tail = "\"}},\"spec\":{}}}}".getBytes(StandardCharsets.UTF_8);
        return new InputStream() {
            private long position;

            @Override
            public int read() {
                byte[] one = new byte[1];
                return read(one, 0, 1) < 0 ? -1 : one[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) {
                if (position >= size) {
                    return -1;
                }
                int n = (int) Math.min(len, size - position);
                for (int i = 0; i < n; i++) {
                    long at = position + i;
                    long fromEnd = size - at;
                    b[off + i] = at < head.length ? head[(int) at]
                            : fromEnd <= tail.length ? tail[(int) (tail.length - fromEnd)] : (byte) 'a';
                }
                position += n;
                return n;
            }
        };
    }

    static String podReview() {
        return """
                {"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"pod-1",
                 "kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
                 "namespace":"default","operation":"CREATE","object":{"apiVersion":"v1","kind":"Pod",
                 "metadata":{"name":"hello","namespace":"default","labels":{"app":"hello"}},
                 "spec":{"containers":[{"name":"hello","image":"hello:1"}]}}}}
                """;
    }
}
