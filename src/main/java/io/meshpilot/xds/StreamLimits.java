package io.meshpilot.xds;

import io.grpc.Status;
import java.util.Collection;

/**
 * What one xDS stream may make the server hold. istiod has no such bounds beyond gRPC's
 * maximum message size (ISTIO_GPRC_MAXRECVMSGSIZE, 4 MiB), and on the plaintext port anyone
 * may open a stream: without them one stream asking for 100,000 made-up type URLs held a
 * watch for each. A stream that passes a bound is ended with RESOURCE_EXHAUSTED naming it,
 * as gRPC ends a call whose message is past the maximum size.
 *
 * @param maxTypes          distinct type URLs watched on one stream (Envoy watches at most
 *                          seven; the debug types, which are not watched, are not counted)
 * @param maxNamesPerType   resource names of one type on one stream
 * @param maxNameCharsPerType the names of one type together: what one state-of-the-world
 *                          request can carry, so a delta stream holds no more than that
 * @param maxNameLength     one resource name, or a version or nonce the client sends
 * @param maxTypeUrlLength  one type URL
 * @param maxErrorLength    a NACK's error message as kept and logged (longer ones are cut)
 */
record StreamLimits(int maxTypes, int maxNamesPerType, int maxNameCharsPerType, int maxNameLength,
                    int maxTypeUrlLength, int maxErrorLength) {

    static final StreamLimits DEFAULT = new StreamLimits(64, 100_000, 4 * 1024 * 1024, 1024, 512, 4096);

    /** A bound was passed: the status that ends the stream. */
    static final class Exceeded extends RuntimeException {
        private final transient Status status;

        private Exceeded(String description) {
            super(description, null, false, false);
            this.status = Status.RESOURCE_EXHAUSTED.withDescription(description);
        }

        Status status() {
            return status;
        }
    }

    /** The type URL of a request. Checked first: a longer one is never logged or kept. */
    void checkTypeUrl(String typeUrl) {
        if (typeUrl.length() > maxTypeUrlLength) {
            throw new Exceeded("type URL of " + typeUrl.length() + " characters exceeds the limit of "
                    + maxTypeUrlLength);
        }
    }

    /** One more type to watch on a stream that watches {@code watched} already. */
    void checkNewType(int watched) {
        if (watched >= maxTypes) {
            throw new Exceeded("more than " + maxTypes + " distinct type URLs on one stream");
        }
    }

    /** A name, version or nonce the client sent. */
    void checkName(String typeUrl, String name) {
        if (name.length() > maxNameLength) {
            throw new Exceeded("resource name, version or nonce of " + name.length() + " characters (type "
                    + TypeUrls.shortName(typeUrl) + ") exceeds the limit of " + maxNameLength);
        }
    }

    /** The names a stream would watch of one type: each name, their number and their characters together. */
    void checkSubscription(String typeUrl, Collection<String> names) {
        if (names.size() > maxNamesPerType) {
            throw new Exceeded(names.size() + " resource names of type " + TypeUrls.shortName(typeUrl)
                    + " exceed the limit of " + maxNamesPerType + " per type on one stream");
        }
        long chars = 0;
        for (String n : names) {
            checkName(typeUrl, n);
            chars += n.length();
        }
        if (chars > maxNameCharsPerType) {
            throw new Exceeded("resource names of type " + TypeUrls.shortName(typeUrl) + " of " + chars
                    + " characters together exceed the limit of " + maxNameCharsPerType + " per type on one stream");
        }
    }

    /** A NACK's error message as it is kept and logged. */
    String errorMessage(String message) {
        return message.length() <= maxErrorLength ? message
                : message.substring(0, maxErrorLength) + "... (" + (message.length() - maxErrorLength) + " more characters)";
    }
}
