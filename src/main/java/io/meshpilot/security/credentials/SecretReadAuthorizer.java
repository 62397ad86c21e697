package io.meshpilot.security.credentials;

import java.util.Optional;

/**
 * Whether a workload may read the Secrets of its own namespace (istiod's credentials
 * controller {@code Authorize}): in a cluster a SubjectAccessReview asks RBAC whether the
 * service account may list secrets there; without Kubernetes there is no RBAC to ask.
 */
@FunctionalInterface
public interface SecretReadAuthorizer {
    /** Empty when {@code serviceAccount} of {@code namespace} may read its namespace's Secrets; else why not. */
    Optional<String> refusal(String serviceAccount, String namespace);

    /** Without Kubernetes: the verified namespace is the only check. */
    SecretReadAuthorizer NO_RBAC = (serviceAccount, namespace) -> Optional.empty();
}
