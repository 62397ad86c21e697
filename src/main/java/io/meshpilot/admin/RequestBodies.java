package io.meshpilot.admin;

import io.helidon.http.RequestException;
import io.helidon.http.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * Reads a request body up to a limit and no further, so what a client sends costs at most
 * the limit in memory whatever it declares or streams (HTTP/2 bodies, which Helidon's
 * listener limit does not cover, included).
 */
final class RequestBodies {
    private RequestBodies() {
    }

    /** The body was longer than the limit; the rest was not read. */
    static final class TooLarge extends Exception {
        TooLarge(long limit) {
            super("request body larger than " + limit + " bytes");
        }
    }

    /** The body as UTF-8 text (malformed bytes replaced), or TooLarge past {@code limit} bytes. */
    static String readUtf8(InputStream in, long limit) throws TooLarge {
        if (in == null) {
            return "";
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        byte[] buf = new byte[16 * 1024];
        long total = 0;
        try {
            int n;
            while ((n = in.read(buf)) != -1) {
                total += n;
                if (total > limit) {
                    throw new TooLarge(limit);
                }
                out.write(buf, 0, n);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the request body", e);
        } catch (RequestException e) {
            // Helidon's HTTP/1 listener limit: a chunked body passed it before our count did
            if (e.status().code() == Status.REQUEST_ENTITY_TOO_LARGE_413.code()) {
                throw new TooLarge(limit);
            }
            throw e;
        }
        return out.toString(StandardCharsets.UTF_8);
    }
}
