package io.meshpilot.webhook;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.UUID;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * The API server's side of an admission webhook call: POSTs an AdmissionReview over TLS to
 * {@code https://localhost:<port>}, trusting only the given CA bundle (as the API server trusts
 * only the webhook configuration's caBundle) and checking the certificate names localhost.
 */
final class AdmissionClient {
    private static final Gson GSON = new Gson();

    private final HttpClient client;
    private final int port;

    /** A reply: the HTTP status, the AdmissionReview's response when the status is 200, the protocol. */
    record Reply(int status, String body, JsonObject review, HttpClient.Version version) {
        JsonObject response() {
            return review.getAsJsonObject("response");
        }

        boolean allowed() {
            return response().get("allowed").getAsBoolean();
        }

        String message() {
            JsonObject s = response().getAsJsonObject("status");
            return s == null || !s.has("message") ? "" : s.get("message").getAsString();
        }

        List<String> warnings() {
            return response().has("warnings") ? response().getAsJsonArray("warnings").asList().stream()
                    .map(e -> e.getAsString()).toList() : List.of();
        }
    }

    AdmissionClient(String caBundlePem, int port) {
        this.port = port;
        try {
            KeyStore trust = KeyStore.getInstance(KeyStore.getDefaultType());
            trust.load(null, null);
            int i = 0;
            for (Certificate c : CertificateFactory.getInstance("X.509")
                    .generateCertificates(new ByteArrayInputStream(caBundlePem.getBytes(StandardCharsets.UTF_8)))) {
                trust.setCertificateEntry("root-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(trust);
            SSLContext ssl = SSLContext.getInstance("TLS");
            ssl.init(null, tmf.getTrustManagers(), null);
            client = HttpClient.newBuilder().sslContext(ssl).connectTimeout(Duration.ofSeconds(5)).build();
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every document of a YAML stream as JSON, as the API server holds objects. */
    static List<JsonObject> json(String yaml) {
        LoaderOptions options = new LoaderOptions();
        List<JsonObject> out = new ArrayList<>();
        for (Object doc : new Yaml(new SafeConstructor(options)).loadAll(yaml)) {
            if (doc instanceof Map<?, ?> map) {
                out.add(GSON.toJsonTree(map).getAsJsonObject());
            }
        }
        return out;
    }

    /** The AdmissionReview the API server sends for {@code object} (admission.k8s.io/{@code version}). */
    static JsonObject review(String version, String operation, JsonObject object, boolean dryRun) {
        String apiVersion = object.get("apiVersion").getAsString();
        String group = apiVersion.contains("/") ? apiVersion.substring(0, apiVersion.indexOf('/')) : "";
        String v = apiVersion.substring(apiVersion.indexOf('/') + 1);
        String kind = object.get("kind").getAsString();
        JsonObject meta = object.has("metadata") ? object.getAsJsonObject("metadata") : new JsonObject();
        JsonObject request = new JsonObject();
        request.addProperty("uid", UUID.randomUUID().toString());
        JsonObject k = new JsonObject();
        k.addProperty("group", group);
        k.addProperty("version", v);
        k.addProperty("kind", kind);
        request.add("kind", k);
        JsonObject r = new JsonObject();
        r.addProperty("group", group);
        r.addProperty("version", v);
        // the plural the API server names (authorizationpolicies), made up for kinds no schema has
        r.addProperty("resource", Schemas.PILOT.forKind(kind).filter(s -> s.group().equals(group)).map(Schema::plural)
                .orElse(kind.toLowerCase(Locale.ROOT) + "s"));
        request.add("resource", r);
        if (meta.has("name")) {
            request.add("name", meta.get("name"));
        }
        request.addProperty("namespace", meta.has("namespace") ? meta.get("namespace").getAsString() : "default");
        request.addProperty("operation", operation);
        request.add("object", "DELETE".equals(operation) ? null : object);
        if ("DELETE".equals(operation)) {
            request.add("oldObject", object);
        }
        request.addProperty("dryRun", dryRun);
        JsonObject review = new JsonObject();
        review.addProperty("apiVersion", "admission.k8s.io/" + version);
        review.addProperty("kind", "AdmissionReview");
        review.add("request", request);
        return review;
    }

    Reply admit(String path, JsonObject review) {
        return post(path, review.toString(), "application/json");
    }

    Reply post(String path, String body, String contentType) {
        return send(path, HttpRequest.BodyPublishers.ofString(body), contentType, Duration.ofSeconds(10));
    }

    /** A body streamed without a Content-Length (the HTTP/2 form of a chunked upload). */
    Reply postStream(String path, InputStream body, String contentType) {
        return send(path, HttpRequest.BodyPublishers.ofInputStream(() -> body), contentType, LARGE_UPLOAD);
    }

    /** A body whose Content-Length is declared. */
    Reply postSized(String path, InputStream body, long length, String contentType) {
        return send(path, HttpRequest.BodyPublishers.fromPublisher(HttpRequest.BodyPublishers.ofInputStream(() -> body),
                length), contentType, LARGE_UPLOAD);
    }

    /** Only a guard against a hung call: a large upload's time is never asserted. */
    private static final Duration LARGE_UPLOAD = Duration.ofMinutes(3);

    private Reply send(String path, HttpRequest.BodyPublisher body, String contentType, Duration timeout) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("https://localhost:" + port + path))
                .timeout(timeout).POST(body);
        if (contentType != null) {
            b.header("Content-Type", contentType);
        }
        try {
            HttpResponse<String> r = client.send(b.build(), HttpResponse.BodyHandlers.ofString());
            JsonObject review = r.statusCode() == 200 ? JsonParser.parseString(r.body()).getAsJsonObject() : null;
            return new Reply(r.statusCode(), r.body(), review, r.version());
        } catch (IOException e) {
            throw new UncheckedIOException("POST https://localhost:" + port + path, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
