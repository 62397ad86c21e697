package io.meshpilot.security.jwt;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Flow;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Reads the small JSON documents token verification needs (key sets, OIDC discovery) from
 * {@code file:} paths or over HTTP(S). Every read is bounded in time and size so that a slow or
 * hostile key server costs a caller one failed authentication, never a hung thread or the heap.
 * Owns its HTTP client, created on first use.
 */
final class DocumentFetcher implements AutoCloseable {
    /** Key sets are a few KiB; anything much larger is not one. */
    static final int MAX_BYTES = 512 * 1024;
    private final Duration timeout;
    private HttpClient http; // guarded by this

    DocumentFetcher(Duration timeout) {
        this.timeout = timeout;
    }

    String fetch(URI uri) throws IOException {
        return fetch(uri, timeout);
    }

    /** Reads {@code uri}, giving up after {@code deadline} (an HTTP read's whole response). */
    String fetch(URI uri, Duration deadline) throws IOException {
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        return switch (scheme) {
            case "file" -> readFile(Path.of(uri));
            case "http", "https" -> get(uri, deadline);
            default -> throw new IOException("unsupported URI scheme: " + uri);
        };
    }

    private static String readFile(Path path) throws IOException {
        try (InputStream in = Files.newInputStream(path)) {
            return readBounded(in, path.toString());
        }
    }

    private String get(URI uri, Duration timeout) throws IOException {
        HttpRequest request = HttpRequest.newBuilder(uri).timeout(timeout)
                .header("Accept", "application/json").GET().build();
        // The request timeout ends at the response headers; the deadline here also covers a
        // body that trickles in.
        CompletableFuture<HttpResponse<byte[]>> pending =
                client().sendAsync(request, info -> new BoundedBody(uri.toString()));
        HttpResponse<byte[]> response;
        try {
            response = pending.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            pending.cancel(true);
            throw new IOException("GET " + uri + ": no complete response within " + timeout.toMillis() + " ms");
        } catch (InterruptedException e) {
            pending.cancel(true);
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while fetching " + uri);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause() == null ? e : e.getCause();
            throw cause instanceof IOException io ? io : new IOException("GET " + uri + ": " + cause, cause);
        }
        if (response.statusCode() / 100 != 2) {
            throw new IOException("GET " + uri + ": HTTP " + response.statusCode());
        }
        return new String(response.body(), StandardCharsets.UTF_8);
    }

    private static String readBounded(InputStream in, String what) throws IOException {
        byte[] bytes = in.readNBytes(MAX_BYTES + 1);
        if (bytes.length > MAX_BYTES) {
            throw new IOException(what + " is larger than " + MAX_BYTES + " bytes");
        }
        return new String(bytes, StandardCharsets.UTF_8);
    }

    private synchronized HttpClient client() {
        if (http == null) {
            // NORMAL redirects: followed, except from https to http.
            http = HttpClient.newBuilder().connectTimeout(timeout)
                    .followRedirects(HttpClient.Redirect.NORMAL).build();
        }
        return http;
    }

    /** Collects a response body, giving up (and cancelling the download) past MAX_BYTES. */
    private static final class BoundedBody implements HttpResponse.BodySubscriber<byte[]> {
        private final String what;
        private final CompletableFuture<byte[]> result = new CompletableFuture<>();
        private final ByteArrayOutputStream out = new ByteArrayOutputStream();
        private Flow.Subscription subscription;

        BoundedBody(String what) {
            this.what = what;
        }

        @Override
        public CompletionStage<byte[]> getBody() {
            return result;
        }

        @Override
        public void onSubscribe(Flow.Subscription s) {
            subscription = s;
            s.request(Long.MAX_VALUE);
        }

        @Override
        public void onNext(List<ByteBuffer> items) {
            for (ByteBuffer b : items) {
                if (result.isDone()) {
                    return;
                }
                if (out.size() + b.remaining() > MAX_BYTES) {
                    subscription.cancel();
                    result.completeExceptionally(new IOException(what + " is larger than " + MAX_BYTES + " bytes"));
                    return;
                }
                byte[] chunk = new byte[b.remaining()];
                b.get(chunk);
                out.writeBytes(chunk);
            }
        }

        @Override
        public void onError(Throwable t) {
            result.completeExceptionally(t);
        }

        @Override
        public void onComplete() {
            result.complete(out.toByteArray());
        }
    }

    @Override
    public synchronized void close() {
        if (http != null) {
            http.close();
            http = null;
        }
    }
}
