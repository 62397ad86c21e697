package io.meshpilot.features;

/** What the HTTP listeners take from a client (not the gRPC ports: grpc has its own limits). */
public final class HttpLimits {
    /** The largest request body: a config object over REST. */
    public static final long MAX_REQUEST_BODY = 8L * 1024 * 1024;

    /**
     * The longest HTTP/1 request line. Helidon reads a plain socket 8 KiB at a time and, when a
     * first read holds no line end and is longer than this, finds no protocol for the
     * connection and closes it without a word; at or above 8 KiB every over-long request line
     * reaches the HTTP/1 parser, which answers 414.
     */
    public static final int MAX_REQUEST_LINE = 16 * 1024;

    private HttpLimits() {
    }
}
