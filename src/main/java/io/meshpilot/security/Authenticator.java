package io.meshpilot.security;

import io.meshpilot.grpc.CallPeer;
import java.util.Optional;

/**
 * Establishes who a caller is (istiod's security.Authenticator): from the call's peer (its
 * verified TLS chain) and request headers. The xDS server asks each registered authenticator
 * in turn on the secure port when XDS_AUTH is on: the client-certificate one, then the
 * token (JWT_RULE) one when configured.
 */
public interface Authenticator {
    /** istiod's authenticator type name, for logs and errors. */
    String type();

    /**
     * The caller's identities, empty when this authenticator does not recognize the caller.
     *
     * @throws AuthenticationException when the caller presented credentials that are invalid
     */
    Optional<Caller> authenticate(CallPeer peer, java.util.function.Function<String, String> headers)
            throws AuthenticationException;

    /** An authenticated caller: its identities (SPIFFE URIs) and how it was authenticated. */
    record Caller(String authenticator, java.util.List<String> identities) {
        public Caller {
            identities = java.util.List.copyOf(identities);
        }
    }

    /** Credentials were presented and are not acceptable. */
    final class AuthenticationException extends Exception {
        public AuthenticationException(String message) {
            super(message);
        }
    }
}
