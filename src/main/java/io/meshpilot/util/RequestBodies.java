package io.meshpilot.util;

import io.helidon.http.RequestException;
import io.helidon.http.Status;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * Reads a request body up to a limit and no further, so what a client sends costs at most
 * the limit in memory whatever it declares or streams (HTTP/2 bodies included).
 */
public final class RequestBodies {
    private RequestBodies() {
    }

    /** The body was longer than the limit; the rest was not read. */
    public static final class TooLarge extends Exception {
        TooLarge(long limit) {
            super(tooLargeMessage(limit));
        }
    }

    /** The answer (413) to a body past {@code limit}, the same on every listener. */
    public static String tooLargeMessage(long limit) {
        return "request body larger than " + limit + " bytes";
    }

    /** The body is not UTF-8; stored as it is it would be changed, so it is refused. */
    public static final class InvalidUtf8 extends Exception {
        InvalidUtf8(int offset) {
            super("invalid UTF-8 at byte " + offset);
        }
    }

    /**
     * The body as UTF-8 text; TooLarge past {@code limit} bytes, InvalidUtf8 naming the first
     * byte that is not UTF-8 (as a config file with such bytes is refused).
     */
    public static String readUtf8(InputStream in, long limit) throws TooLarge, InvalidUtf8 {
        return decode(read(in, limit));
    }

    /** The body's bytes; TooLarge past {@code limit} bytes. */
    public static byte[] read(InputStream in, long limit) throws TooLarge {
        if (in == null) {
            return new byte[0];
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
            // the listener's limit (Helidon's HTTP/1 one, or the HTTP/2 one of every listener)
            // was passed before our count was
            if (e.status().code() == Status.REQUEST_ENTITY_TOO_LARGE_413.code()) {
                throw new TooLarge(limit);
            }
            throw e;
        }
        return out.toByteArray();
    }

    private static String decode(byte[] bytes) throws InvalidUtf8 {
        ByteBuffer in = ByteBuffer.wrap(bytes);
        CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT);
        CharBuffer text = CharBuffer.allocate(bytes.length);
        if (decoder.decode(in, text, true).isError() || decoder.flush(text).isError()) {
            throw new InvalidUtf8(in.position());
        }
        return text.flip().toString();
    }
}
