package io.meshpilot.webhook;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.testing.TestServers;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The webhook listener (15017) as the API server calls it: HTTP/2 over TLS. A body past the
 * listener's limit is refused with 413 without being held, as over HTTP/1.1.
 */
class WebhookHttp2Test {
    static final long MIB = 1024L * 1024;

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static AdmissionClient api;

    @BeforeAll
    static void start() throws Exception {
        server = TestServers.start(dir);
        String pem = server.server().certificates().trustBundle().pem();
        api = new AdmissionClient(pem, server.ports().get("webhook"));
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
        assertEquals(java.net.http.HttpClient.Version.HTTP_2, r.version());
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
}
