package io.meshpilot.security;

import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import java.util.List;
import java.util.Optional;

/**
 * Establishes who a caller is (istiod's security.Authenticator): from the call's peer (its
 * verified TLS chain) and request headers. The xDS server asks each registered authenticator
 * in turn on the secure port when XDS_AUTH is on: the client-certificate one, then the
 * token (JWT_RULE) one when configured, then in Kubernetes mode the TokenReview one.
 */
public interface Authenticator {
    /** istiod's authenticator type name, for logs and errors. */
    String type();

    /**
     * The caller's identities, empty when this authenticator does not recognize the caller.
     *
     * @throws AuthenticationException when the caller presented credentials that are invalid
     */
    Optional<Caller> authenticate(CallPeer peer, CallHeaders headers)
            throws AuthenticationException;

    /**
     * An authenticated caller: its identities (SPIFFE URIs), how it was authenticated and,
     * when a Kubernetes TokenReview vouched for it, the pod and service account the review
     * named (istiod's KubernetesInfo, which node-agent impersonation checks); else null.
     */
    record Caller(String authenticator, List<String> identities, KubernetesInfo kubernetes) {
        public Caller {
            identities = List.copyOf(identities);
        }

        public Caller(String authenticator, List<String> identities) {
            this(authenticator, identities, null);
        }
    }

    /**
     * Who a Kubernetes service-account token speaks for, from the TokenReview: the service
     * account always, the pod only for tokens bound to one (empty strings otherwise).
     */
    record KubernetesInfo(String namespace, String serviceAccount, String podName, String podUid) {
    }

    /** Credentials were presented and are not acceptable. */
    final class AuthenticationException extends Exception {
        public AuthenticationException(String message) {
            super(message);
        }
    }
}
