package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.sun.net.httpserver.HttpServer;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.CertificateService;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.Http;
import io.meshpilot.testing.InjectWebhookCalls;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.PrometheusTextParser;
import io.meshpilot.testing.TestServers;
import io.meshpilot.xds.TypeUrls;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import java.io.ByteArrayInputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 23, acceptance 2: after a scripted scenario against a real server (ADS clients connect,
 * a push, a NACK, a CSR over 15012, an injection and a validation over TLS, a remote JWKS
 * fetch), {@code /metrics} parses as Prometheus text and holds every metric the issue names,
 * under istiod's name, type and label names. The list is data ({@link #ISTIOD_METRICS}), each
 * entry with where istiod defines it (paths in istio/istio).
 */
class IstiodMetricsScenarioTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    private static final String CONFIGS = "/api/v1/configs/networking.istio.io/v1/";

    /**
     * One metric as istiod exports it.
     *
     * @param labels the label names of every series (histograms: besides {@code le})
     * @param source where istiod defines it
     */
    record IstiodMetric(String name, String type, List<String> labels, String source) {
    }

    static final List<IstiodMetric> ISTIOD_METRICS = List.of(
            new IstiodMetric("pilot_k8s_cfg_events", "counter", List.of("type", "event"),
                    "pilot/pkg/config/kube/crdclient/metrics.go"),
            new IstiodMetric("pilot_k8s_reg_events", "counter", List.of("type", "event"),
                    "pilot/pkg/serviceregistry/kube/controller/controller.go"),
            new IstiodMetric("pilot_total_xds_internal_errors", "counter", List.of(), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_xds_config_size_bytes", "histogram", List.of("type"), "pilot/pkg/xds/monitoring.go"),
            new IstiodMetric("istio_build", "gauge", List.of("component", "tag"), "pkg/version/stats.go"),
            new IstiodMetric("galley_validation_passed", "counter", List.of("group", "version", "resource"),
                    "pkg/webhooks/validation/server/monitoring.go"),
            new IstiodMetric("galley_validation_failed", "counter", List.of("group", "version", "resource", "reason"),
                    "pkg/webhooks/validation/server/monitoring.go"),
            new IstiodMetric("sidecar_injection_requests_total", "counter", List.of(), "pkg/kube/inject/monitoring.go"),
            new IstiodMetric("sidecar_injection_success_total", "counter", List.of(), "pkg/kube/inject/monitoring.go"),
            new IstiodMetric("sidecar_injection_skip_total", "counter", List.of(), "pkg/kube/inject/monitoring.go"),
            new IstiodMetric("citadel_server_root_cert_expiry_seconds", "gauge", List.of(),
                    "security/pkg/server/ca/monitoring.go"),
            new IstiodMetric("citadel_server_cert_chain_expiry_seconds", "gauge", List.of(),
                    "security/pkg/server/ca/monitoring.go"),
            new IstiodMetric("citadel_server_root_cert_expiry_timestamp", "gauge", List.of(),
                    "security/pkg/server/ca/monitoring.go"),
            new IstiodMetric("citadel_server_cert_chain_expiry_timestamp", "gauge", List.of(),
                    "security/pkg/server/ca/monitoring.go"),
            new IstiodMetric("citadel_server_csr_count", "counter", List.of(), "security/pkg/server/ca/monitoring.go"),
            new IstiodMetric("pilot_xds_send_time", "histogram", List.of(), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_xds_expired_nonce", "counter", List.of("type"), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_xds_write_timeout", "counter", List.of(), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_total_xds_rejects", "counter", List.of("type"), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_xds_cds_reject", "gauge", List.of("node", "err"), "pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_xds", "gauge", List.of("version"), "pilot/pkg/xds/monitoring.go"),
            new IstiodMetric("pilot_eds_no_instances", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_no_ip", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_endpoint_not_ready", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_conflict_outbound_listener_tcp_over_current_tcp", "gauge", List.of(),
                    "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_conflict_inbound_listener", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_duplicate_envoy_clusters", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_dns_cluster_without_endpoints", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_vservice_dup_domain", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_destrule_subsets", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_virt_services", "gauge", List.of(), "pilot/pkg/model/push_context.go"),
            new IstiodMetric("pilot_jwks_resolver_network_fetch_success_total", "counter", List.of(),
                    "pilot/pkg/model/jwks_resolver.go"),
            new IstiodMetric("pilot_jwks_resolver_network_fetch_fail_total", "counter", List.of(),
                    "pilot/pkg/model/jwks_resolver.go"),
            new IstiodMetric("webhook_patch_attempts_total", "counter", List.of("name"), "pkg/webhooks/monitoring.go"),
            new IstiodMetric("webhook_patch_retries_total", "counter", List.of("name"), "pkg/webhooks/monitoring.go"),
            new IstiodMetric("webhook_patch_failures_total", "counter", List.of("name", "reason"),
                    "pkg/webhooks/monitoring.go"));

    /**
     * Metrics istiod records only in Kubernetes mode (its CRD client, its Kubernetes registry,
     * its webhook configuration patcher): this file-mode scenario cannot make them.
     * KubernetesModeServerTest checks pilot_k8s_cfg_events against the fake API server; the
     * others are declared under these names in KubeServiceRegistry and WebhookConfigPatcher.
     */
    static final Set<String> KUBERNETES_ONLY = Set.of("pilot_k8s_cfg_events", "pilot_k8s_reg_events",
            "webhook_patch_attempts_total", "webhook_patch_retries_total", "webhook_patch_failures_total");

    @TempDir
    static Path dir;
    static MeshPilotServer server;
    static HttpServer jwks;

    @BeforeAll
    static void start() throws Exception {
        TestServers.copyBookinfo(dir);
        server = TestServers.start(dir);
        String keys = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
        jwks = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        jwks.createContext("/", exchange -> {
            byte[] body = exchange.getRequestURI().getPath().equals("/keys") ? keys.getBytes(StandardCharsets.UTF_8)
                    : new byte[0];
            exchange.sendResponseHeaders(body.length == 0 ? 404 : 200, body.length == 0 ? -1 : body.length);
            try (var out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        jwks.start();
    }

    @AfterAll
    static void stop() {
        if (jwks != null) {
            jwks.stop(0);
        }
        if (server != null) {
            server.close();
        }
    }

    @Test
    void afterTheScenarioMetricsHasEveryIstiodMetricWithItsTypeAndLabels() throws Exception {
        int grpc = server.ports().get("grpc");
        int http = server.ports().get("http");
        // two ServiceEntries of one host in two namespaces: istiod's duplicate clusters; no endpoints: EDS without instances
        for (String ns : List.of("default", "shop")) {
            put(http, CONFIGS + "serviceentries/" + ns + "/dup", """
                    apiVersion: networking.istio.io/v1
                    kind: ServiceEntry
                    metadata: {name: dup, namespace: %s}
                    spec: {hosts: [dup.example.com], addresses: [240.0.0.9], ports: [{number: 9000, name: tcp, protocol: TCP}],
                           resolution: STATIC, location: MESH_INTERNAL}
                    """.formatted(ns));
        }
        put(http, "/api/v1/configs/security.istio.io/v1/requestauthentications/default/jwt", """
                apiVersion: security.istio.io/v1
                kind: RequestAuthentication
                metadata: {name: jwt, namespace: default}
                spec:
                  jwtRules:
                  - {issuer: "https://good.example.com", jwksUri: "http://127.0.0.1:%1$d/keys"}
                  - {issuer: "https://gone.example.com", jwksUri: "http://127.0.0.1:%1$d/gone"}
                """.formatted(jwks.getAddress().getPort()));
        String proxy = "sidecar~10.99.0.1~metrics-1.default~default.svc.cluster.local"; // no endpoint has its IP
        try (AdsClient sidecar = new AdsClient(grpc, proxy, Map.of("NAMESPACE", "default", "ISTIO_VERSION", "1.26.0"))) {
            sidecar.subscribe(TypeUrls.CLUSTER, List.of());
            DiscoveryResponse clusters = sidecar.await(TypeUrls.CLUSTER, WAIT);
            sidecar.ack(clusters, List.of());
            sidecar.subscribe(TypeUrls.ENDPOINT, List.of("outbound|9000||dup.example.com"));
            DiscoveryResponse endpoints = sidecar.await(TypeUrls.ENDPOINT, WAIT);
            sidecar.ack(endpoints, List.of("outbound|9000||dup.example.com"));
            // a push (a VirtualService changes), NACKed
            put(http, CONFIGS + "virtualservices/default/metrics-vs", """
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: metrics-vs, namespace: default}
                    spec: {hosts: [details], http: [{route: [{destination: {host: details}}]}]}
                    """);
            DiscoveryResponse pushed = sidecar.await(TypeUrls.CLUSTER, WAIT);
            sidecar.nack(pushed, List.of(), "rejected by the metrics scenario");
            // a request with a nonce no response carried: istiod's expired nonce
            sidecar.send(DiscoveryRequest.newBuilder()
                    .setTypeUrl(TypeUrls.CLUSTER).setResponseNonce("no-such-nonce").setVersionInfo("0").build(), false);
            csrOver15012();
            inject();
            validate();

            Map<String, PrometheusTextParser.Family> families = awaitMetrics(f -> f.containsKey("pilot_xds_cds_reject")
                    && f.containsKey("pilot_jwks_resolver_network_fetch_fail_total")
                    && value(f, "pilot_no_ip") >= 1 && value(f, "pilot_eds_no_instances") >= 1);
            List<String> problems = new ArrayList<>();
            for (IstiodMetric m : ISTIOD_METRICS) {
                if (KUBERNETES_ONLY.contains(m.name())) {
                    continue;
                }
                String problem = check(m, families.get(m.name()));
                if (problem != null) {
                    problems.add(m.name() + " (istiod: " + m.source() + "): " + problem);
                }
            }
            assertEquals(List.of(), problems, "metrics not as istiod exports them");

            assertTrue(families.get("istio_build").samples().stream()
                    .anyMatch(s -> "pilot".equals(s.labels().get("component"))), "istio_build{component=\"pilot\"}");
            assertEquals(1, value(families, "pilot_duplicate_envoy_clusters"), "outbound|9000||dup.example.com twice");
            assertTrue(value(families, "citadel_server_root_cert_expiry_seconds") > 0);
            JsonObject status = JsonParser.parseString(Http.get(http, "/debug/push_status").body()).getAsJsonObject()
                    .getAsJsonObject("ProxyStatus");
            assertEquals(proxy, status.getAsJsonObject("pilot_no_ip").getAsJsonObject(proxy).get("proxy").getAsString(),
                    "keyed by proxy id, as istiod: " + status);
            assertTrue(status.getAsJsonObject("pilot_eds_no_instances").has("outbound|9000||dup.example.com"),
                    status.toString());
            assertTrue(status.getAsJsonObject("pilot_duplicate_envoy_clusters").has("outbound|9000||dup.example.com"),
                    status.toString());
        } finally {
            Http.send(http, CONFIGS + "virtualservices/default/metrics-vs", "DELETE", null, null);
        }
    }

    /** null when {@code family} is {@code expected}; else what differs. */
    static String check(IstiodMetric expected, PrometheusTextParser.Family family) {
        if (family == null) {
            return "missing";
        }
        if (!family.type().equals(expected.type())) {
            return "typed " + family.type() + ", istiod: " + expected.type();
        }
        if (family.samples().isEmpty()) {
            return "no samples";
        }
        for (PrometheusTextParser.Sample s : family.samples()) {
            if (expected.type().equals("histogram") && s.name().equals(expected.name())) {
                // istiod's histograms have buckets, count and sum only; a quantile series is a summary's
                return "a series " + s.name() + s.labels() + " beside the buckets, count and sum";
            }
            Set<String> names = new TreeSet<>(s.labels().keySet());
            if (expected.type().equals("histogram") && s.name().endsWith("_bucket")) {
                names.remove("le");
            }
            if (!names.equals(new TreeSet<>(expected.labels()))) {
                return "labels " + names + " on " + s.name() + ", istiod: " + expected.labels();
            }
        }
        return null;
    }

    static double value(Map<String, PrometheusTextParser.Family> families, String name) {
        PrometheusTextParser.Family f = families.get(name);
        return f == null || f.samples().isEmpty() ? -1 : f.samples().get(0).value();
    }

    static Map<String, PrometheusTextParser.Family> awaitMetrics(
            Predicate<Map<String, PrometheusTextParser.Family>> until) throws InterruptedException {
        int monitoring = server.ports().get("monitoring");
        long deadline = System.nanoTime() + WAIT.toNanos();
        Map<String, PrometheusTextParser.Family> families = PrometheusTextParser.parse(Http.get(monitoring, "/metrics").body());
        while (!until.test(families) && System.nanoTime() < deadline) {
            Thread.sleep(100);
            families = PrometheusTextParser.parse(Http.get(monitoring, "/metrics").body());
        }
        return families;
    }

    static void put(int http, String path, String yaml) {
        Http.Reply r = Http.send(http, path, "PUT", yaml, null);
        assertTrue(r.status() == 200 || r.status() == 201, path + ": " + r.status() + " " + r.body());
    }

    /** A CreateCertificate call on 15012 without credentials, as a misconfigured agent makes: counted and refused. */
    static void csrOver15012() throws Exception {
        X509Certificate root = rootCertificate();
        ManagedChannel ch = NettyChannelBuilder.forAddress("localhost", server.ports().get("grpc-secure"))
                .sslContext(GrpcSslContexts.forClient().trustManager(root).build()).build();
        try {
            String csr = new OpenSsl(Files.createDirectories(dir.resolve("openssl"))).ecCsr("w", "prime256v1", null);
            ClientCalls.blockingUnaryCall(ch, CertificateService.CREATE_CERTIFICATE,
                    CallOptions.DEFAULT.withDeadlineAfter(20, TimeUnit.SECONDS),
                    IstioCertificateRequest.newBuilder().setCsr(csr).setValidityDuration(600).build());
        } catch (StatusRuntimeException e) {
            assertEquals(Status.Code.UNAUTHENTICATED, e.getStatus().getCode(), e.toString());
        } finally {
            ch.shutdownNow();
        }
    }

    static void inject() throws Exception {
        JsonObject pod = JsonParser.parseString("""
                {"apiVersion": "v1", "kind": "Pod",
                 "metadata": {"name": "hello", "namespace": "default", "labels": {"app": "hello"}},
                 "spec": {"containers": [{"name": "hello", "image": "hello:1", "ports": [{"containerPort": 80}]}]}}
                """).getAsJsonObject();
        HttpResponse<String> r = postOverTls("/inject", review("Pod", "", "v1", "pods", pod));
        assertEquals(200, r.statusCode(), r.body());
        // and one the pod's annotation opts out of: istiod's skip
        JsonObject optedOut = pod.deepCopy();
        optedOut.getAsJsonObject("metadata").add("annotations",
                JsonParser.parseString("{\"sidecar.istio.io/inject\": \"false\"}"));
        r = postOverTls("/inject", review("Pod", "", "v1", "pods", optedOut));
        assertEquals(200, r.statusCode(), r.body());
    }

    static void validate() throws Exception {
        JsonObject good = JsonParser.parseString("""
                {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                 "metadata": {"name": "ok", "namespace": "default"},
                 "spec": {"hosts": ["ok"], "http": [{"route": [{"destination": {"host": "ok"}}]}]}}
                """).getAsJsonObject();
        JsonObject bad = JsonParser.parseString("""
                {"apiVersion": "networking.istio.io/v1", "kind": "VirtualService",
                 "metadata": {"name": "bad", "namespace": "default"}, "spec": {"hosts": []}}
                """).getAsJsonObject();
        for (JsonObject vs : List.of(good, bad)) {
            HttpResponse<String> r = postOverTls("/validate",
                    review("VirtualService", "networking.istio.io", "v1", "virtualservices", vs));
            assertEquals(200, r.statusCode(), r.body());
        }
    }

    static String review(String kind, String group, String version, String resource, JsonObject object) {
        return InjectWebhookCalls.review("uid-" + kind, "default", group, version, kind, resource, object);
    }

    /** A POST to the webhook port as the API server makes it: TLS, trusting only the server's CA root. */
    static HttpResponse<String> postOverTls(String path, String body) throws Exception {
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("root", rootCertificate());
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, tmf.getTrustManagers(), null);
        HttpClient client = HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build();
        return client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + server.ports().get("webhook") + path))
                .timeout(WAIT).header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    static X509Certificate rootCertificate() throws Exception {
        String pem = server.server().components().certificates().trustBundle().pem();
        return (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)));
    }
}
