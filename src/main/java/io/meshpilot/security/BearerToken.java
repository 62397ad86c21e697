package io.meshpilot.security;

import io.meshpilot.security.Authenticator.AuthenticationException;
import java.util.List;
import java.util.Optional;

/**
 * The token of an {@code authorization} header, read as istiod reads it for every token
 * authenticator: the rest of the value after the exact prefix {@code "Bearer "}, kept as it is
 * (a second space is part of the token). On a gRPC call ({@code security.ExtractBearerToken})
 * the first of the header's values with that prefix counts; on an HTTP debug request
 * ({@code security.ExtractRequestToken}) the header's first value counts, and the prefix
 * {@code "Istio "} carries a token too. Any other spelling ("bearer", no space) is no token at
 * all, so the caller is left to the next authenticator rather than refused.
 */
public final class BearerToken {
    public static final String HEADER = "authorization";
    public static final String PREFIX = "Bearer ";
    /** istiod's K8sTokenPrefix, read on HTTP requests only. */
    public static final String ISTIO_PREFIX = "Istio ";
    /** Far above any real JWT; bounds what a caller can make an authenticator parse or send on. */
    public static final int MAX_CHARS = 64 * 1024;

    private BearerToken() {
    }

    /**
     * @param authorizations the header's values on a gRPC call, in the order sent
     * @return the token, empty when no value carries one
     * @throws AuthenticationException the token is empty or longer than {@link #MAX_CHARS}
     */
    public static Optional<String> fromGrpcCall(List<String> authorizations) throws AuthenticationException {
        for (String value : authorizations) {
            if (value.startsWith(PREFIX)) {
                return Optional.of(checked(value.substring(PREFIX.length())));
            }
        }
        return Optional.empty();
    }

    /**
     * @param authorization the header's first value on an HTTP request, null when absent
     * @return the token, empty when the value carries none
     * @throws AuthenticationException the token is empty or longer than {@link #MAX_CHARS}
     */
    public static Optional<String> fromHttpRequest(String authorization) throws AuthenticationException {
        if (authorization == null) {
            return Optional.empty();
        }
        for (String prefix : List.of(PREFIX, ISTIO_PREFIX)) {
            if (authorization.startsWith(prefix)) {
                return Optional.of(checked(authorization.substring(prefix.length())));
            }
        }
        return Optional.empty();
    }

    private static String checked(String token) throws AuthenticationException {
        if (token.length() > MAX_CHARS) {
            throw new AuthenticationException("token too large");
        }
        if (token.isEmpty()) {
            throw new AuthenticationException("empty bearer token");
        }
        return token;
    }
}
