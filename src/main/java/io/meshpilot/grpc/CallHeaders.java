package io.meshpilot.grpc;

import java.util.List;

/**
 * The request headers of a call, by lower-case name: every value of a header in the order sent
 * (gRPC metadata and HTTP both allow a header more than once; istiod's token reader takes the
 * first authorization value that carries a bearer token, not the last).
 */
@FunctionalInterface
public interface CallHeaders {
    CallHeaders NONE = name -> List.of();

    /** The header's values, empty when it was not sent. */
    List<String> all(String name);

    /** The header's first value, null when it was not sent. */
    default String first(String name) {
        List<String> values = all(name);
        return values.isEmpty() ? null : values.getFirst();
    }
}
