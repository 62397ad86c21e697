package io.meshpilot.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/** Plain HTTP calls to a server under test over loopback. */
public final class Http {
    private static final HttpClient CLIENT = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    /** A response: status, body, content type. */
    public record Reply(int status, String body, String contentType, Map<String, List<String>> headers) {
        public List<String> header(String name) {
            return headers.entrySet().stream().filter(e -> e.getKey().equalsIgnoreCase(name))
                    .flatMap(e -> e.getValue().stream()).toList();
        }
    }

    private Http() {
    }

    public static Reply get(int port, String path) {
        return send(port, path, "GET", null, null);
    }

    public static Reply get(int port, String path, String accept) {
        return send(port, path, "GET", null, accept);
    }

    public static Reply send(int port, String path, String method, String body, String accept) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
                .timeout(Duration.ofSeconds(20))
                .method(method, body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        if (accept != null) {
            b.header("Accept", accept);
        }
        try {
            HttpResponse<String> r = CLIENT.send(b.build(), HttpResponse.BodyHandlers.ofString());
            return new Reply(r.statusCode(), r.body(), r.headers().firstValue("content-type").orElse(""), r.headers().map());
        } catch (IOException e) {
            throw new UncheckedIOException("HTTP " + method + " " + path + " on port " + port, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
