package io.meshpilot.security;

/**
 * Whether an authenticated caller may have a certificate signed for another identity
 * (istiod's node authorizer: CSR metadata {@code ImpersonatedIdentity}). Without
 * Kubernetes and CA_TRUSTED_NODE_ACCOUNTS nobody may.
 */
public interface ImpersonationPolicy {
    ImpersonationPolicy NOBODY = (caller, requested) -> {
        throw new Authenticator.AuthenticationException(
                "impersonation not allowed: no trusted node accounts (CA_TRUSTED_NODE_ACCOUNTS) are configured");
    };

    /**
     * @throws Authenticator.AuthenticationException saying why {@code caller} may not ask for {@code requestedIdentity}
     */
    void authorize(Authenticator.Caller caller, String requestedIdentity) throws Authenticator.AuthenticationException;
}
