package io.meshpilot.bootstrap;

import io.helidon.http.DirectHandler.EventType;
import io.helidon.http.HeaderNames;
import io.helidon.http.RequestException;
import io.helidon.http.Status;
import io.helidon.webserver.http.Filter;
import io.helidon.webserver.http.FilterChain;
import io.helidon.webserver.http.RoutingRequest;
import io.helidon.webserver.http.RoutingResponse;
import io.meshpilot.util.RequestBodies;
import java.io.IOException;
import java.io.InputStream;

/**
 * The request body limit of an HTTP listener on every protocol. Helidon 4.4 applies a
 * listener's max-payload-size to HTTP/1 only; an HTTP/2 body (h2 with TLS on the webhook
 * listener, as the API server sends it, or h2c on the plaintext ones) is read as far as its
 * handler reads. Here a declared Content-Length past the limit is answered 413 before anything
 * is read, and a body streamed past it fails its reader with the 413 that Helidon's HTTP/1
 * throws, whoever reads it. What a client still sends after a refusal Helidon reads and drops
 * as it arrives: nothing holds it.
 */
final class RequestBodyLimit implements Filter {
    private final long limit;

    RequestBodyLimit(long limit) {
        this.limit = limit;
    }

    @Override
    public void filter(FilterChain chain, RoutingRequest req, RoutingResponse res) {
        if (declaredLength(req) > limit) {
            res.status(Status.REQUEST_ENTITY_TOO_LARGE_413);
            res.header(HeaderNames.CONTENT_TYPE, "text/plain; charset=utf-8");
            res.send(tooLarge() + "\n");
            return;
        }
        req.streamFilter(LimitedStream::new);
        chain.proceed();
    }

    /** The Content-Length, or -1 without one (or with one that is no number: Helidon refuses that itself). */
    private static long declaredLength(RoutingRequest req) {
        try {
            return req.headers().contentLength().orElse(-1);
        } catch (RuntimeException e) {
            return -1;
        }
    }

    private String tooLarge() {
        return RequestBodies.tooLargeMessage(limit);
    }

    /** Counts what its reader takes and refuses the byte past the limit. */
    private final class LimitedStream extends InputStream {
        private final InputStream body;
        private long read;

        LimitedStream(InputStream body) {
            this.body = body;
        }

        @Override
        public int read() throws IOException {
            int b = body.read();
            if (b >= 0) {
                count(1);
            }
            return b;
        }

        @Override
        public int read(byte[] buf, int off, int len) throws IOException {
            int n = body.read(buf, off, len);
            if (n > 0) {
                count(n);
            }
            return n;
        }

        @Override
        public void close() throws IOException {
            body.close();
        }

        private void count(int n) {
            read += n;
            if (read > limit) {
                throw RequestException.builder().type(EventType.BAD_REQUEST).status(Status.REQUEST_ENTITY_TOO_LARGE_413)
                        .message(tooLarge()).build();
            }
        }
    }
}
