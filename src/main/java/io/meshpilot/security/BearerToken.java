package io.meshpilot.security;

import io.meshpilot.security.Authenticator.AuthenticationException;
import java.util.Optional;

/**
 * The token of an {@code authorization} header, read as istiod's
 * {@code security.ExtractBearerToken} reads it for every token authenticator: only the exact
 * prefix {@code "Bearer "} carries one. Any other spelling ("bearer", no space) is no bearer
 * token at all, so the caller is left to the next authenticator rather than refused.
 */
public final class BearerToken {
    public static final String PREFIX = "Bearer ";
    /** Far above any real JWT; bounds what a caller can make an authenticator parse or send on. */
    public static final int MAX_CHARS = 64 * 1024;

    private BearerToken() {
    }

    /**
     * @param authorization the header's value, null when absent
     * @return the token, empty when the header carries none
     * @throws AuthenticationException the token is empty or longer than {@link #MAX_CHARS}
     */
    public static Optional<String> from(String authorization) throws AuthenticationException {
        if (authorization == null || !authorization.startsWith(PREFIX)) {
            return Optional.empty();
        }
        if (authorization.length() > PREFIX.length() + MAX_CHARS) {
            throw new AuthenticationException("token too large");
        }
        String token = authorization.substring(PREFIX.length()).strip();
        if (token.isEmpty()) {
            throw new AuthenticationException("empty bearer token");
        }
        return Optional.of(token);
    }
}
