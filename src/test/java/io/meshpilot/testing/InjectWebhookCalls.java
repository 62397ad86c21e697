package io.meshpilot.testing;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import jakarta.json.Json;
import java.io.ByteArrayInputStream;
import java.io.StringReader;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.KeyStore;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.Base64;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.TrustManager;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509ExtendedTrustManager;
import javax.net.ssl.X509TrustManager;

/**
 * The API server's calls of a server's injection webhook ({@code /inject} on the webhook
 * port): a TLS client that trusts only the server's CA root, the AdmissionReview for a pod, and
 * the pod the API server stores once the response's JSON Patch is applied.
 */
public final class InjectWebhookCalls {
    private InjectWebhookCalls() {
    }

    /**
     * A client as the API server is for a webhook Service: it trusts only the server's CA root
     * and requires {@code serviceName} (istiod.istio-system.svc) in the certificate, while
     * connecting to loopback.
     */
    public static HttpClient tlsClientFor(MeshPilotServer server, String serviceName) throws Exception {
        String root = server.server().components().certificates().trustBundle().pem();
        KeyStore trust = KeyStore.getInstance("PKCS12");
        trust.load(null, null);
        trust.setCertificateEntry("root", CertificateFactory.getInstance("X.509")
                .generateCertificate(new ByteArrayInputStream(root.getBytes(StandardCharsets.US_ASCII))));
        TrustManagerFactory tmf = TrustManagerFactory.getInstance("PKIX");
        tmf.init(trust);
        var pkix = (X509TrustManager) tmf.getTrustManagers()[0];
        var byServiceName = new X509ExtendedTrustManager() {
            private void check(X509Certificate[] chain, String authType)
                    throws CertificateException {
                pkix.checkServerTrusted(chain, authType);
                var names = chain[0].getSubjectAlternativeNames();
                if (names == null || names.stream().noneMatch(n -> serviceName.equals(n.get(1)))) {
                    throw new CertificateException("no SAN " + serviceName + " in " + names);
                }
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType, Socket s)
                    throws CertificateException {
                check(chain, authType);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType,
                                           SSLEngine e) throws CertificateException {
                check(chain, authType);
            }

            @Override
            public void checkServerTrusted(X509Certificate[] chain, String authType)
                    throws CertificateException {
                check(chain, authType);
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType, Socket s)
                    throws CertificateException {
                throw new CertificateException("client side only");
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType,
                                           SSLEngine e) throws CertificateException {
                throw new CertificateException("client side only");
            }

            @Override
            public void checkClientTrusted(X509Certificate[] chain, String authType)
                    throws CertificateException {
                throw new CertificateException("client side only");
            }

            @Override
            public X509Certificate[] getAcceptedIssuers() {
                return pkix.getAcceptedIssuers();
            }
        };
        SSLContext tls = SSLContext.getInstance("TLS");
        tls.init(null, new TrustManager[] {byServiceName}, null);
        return HttpClient.newBuilder().sslContext(tls).connectTimeout(Duration.ofSeconds(5)).build();
    }

    /** POSTs {@code body} to {@code https://localhost:<port><path>}. */
    public static HttpResponse<String> post(HttpClient client, int port, String path, String contentType, String body)
            throws Exception {
        return client.send(HttpRequest.newBuilder(URI.create("https://localhost:" + port + path))
                .timeout(Duration.ofSeconds(20)).header("Content-Type", contentType)
                .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    }

    /** The AdmissionReview v1 the API server sends for creating {@code pod} in {@code default}. */
    public static String review(String uid, JsonObject pod) {
        return review(uid, "default", pod);
    }

    /** The AdmissionReview v1 the API server sends for creating {@code pod} in {@code namespace}. */
    public static String review(String uid, String namespace, JsonObject pod) {
        return review(uid, namespace, "", "v1", "Pod", "pods", pod);
    }

    /** The AdmissionReview v1 the API server sends for creating {@code object} (of any kind: the validation webhook's too). */
    public static String review(String uid, String namespace, String group, String version, String kind,
                                String resource, JsonObject object) {
        JsonObject request = new JsonObject();
        request.addProperty("uid", uid);
        JsonObject k = new JsonObject();
        k.addProperty("group", group);
        k.addProperty("version", version);
        k.addProperty("kind", kind);
        request.add("kind", k);
        JsonObject r = new JsonObject();
        r.addProperty("group", group);
        r.addProperty("version", version);
        r.addProperty("resource", resource);
        request.add("resource", r);
        request.addProperty("namespace", namespace);
        request.addProperty("operation", "CREATE");
        request.add("object", object);
        JsonObject review = new JsonObject();
        review.addProperty("apiVersion", "admission.k8s.io/v1");
        review.addProperty("kind", "AdmissionReview");
        review.add("request", request);
        return review.toString();
    }

    /** The AdmissionReview response of a 200 answer. */
    public static JsonObject response(HttpResponse<String> r) {
        assertEquals(200, r.statusCode(), r.body());
        JsonObject review = JsonParser.parseString(r.body()).getAsJsonObject();
        assertEquals("admission.k8s.io/v1", review.get("apiVersion").getAsString());
        assertEquals("AdmissionReview", review.get("kind").getAsString());
        return review.getAsJsonObject("response");
    }

    /** The pod the API server would store: the review's pod with the response's patch applied. */
    public static JsonObject admitted(JsonObject pod, JsonObject response) {
        if (!response.has("patch")) {
            return pod;
        }
        JsonArray patch = JsonParser.parseString(new String(Base64.getDecoder().decode(response.get("patch").getAsString()),
                StandardCharsets.UTF_8)).getAsJsonArray();
        return applyPatch(pod, patch);
    }

    /** {@code pod} with an RFC 6902 JSON Patch applied, as the API server applies a webhook's patch. */
    public static JsonObject applyPatch(JsonObject pod, JsonArray patch) {
        var p = Json.createPatch(Json.createReader(new StringReader(patch.toString())).readArray());
        var out = p.apply(Json.createReader(new StringReader(pod.toString())).readObject());
        return JsonParser.parseString(out.toString()).getAsJsonObject();
    }
}
