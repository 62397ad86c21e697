package io.meshpilot.security;

import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import java.util.Optional;
import java.util.function.Function;

/**
 * An authenticator of the bearer token a caller sends (istiod's JWT_RULE and Kubernetes JWT
 * authenticators both start from ExtractBearerToken): the header is read by
 * {@link BearerToken}, the same for every one of them; a caller without a token is left to the
 * next authenticator.
 */
public interface BearerTokenAuthenticator extends Authenticator {

    @Override
    default Optional<Caller> authenticate(CallPeer peer, CallHeaders headers)
            throws AuthenticationException {
        Optional<String> token = peer.http() ? BearerToken.fromHttpRequest(headers.first(BearerToken.HEADER))
                : BearerToken.fromGrpcCall(headers.all(BearerToken.HEADER));
        return token.isEmpty() ? Optional.empty() : Optional.of(authenticateToken(token.get(), headers::first));
    }

    /**
     * The caller {@code token} proves.
     *
     * @param headers the call's other headers, for what else the authenticator reads (the cluster id)
     * @throws AuthenticationException the token is not acceptable
     */
    Caller authenticateToken(String token, Function<String, String> headers) throws AuthenticationException;
}
