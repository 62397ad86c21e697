package io.meshpilot.security.credentials;

/**
 * What SDS reads for a proxy of one cluster: the Secrets it may be given (its own cluster's,
 * then the config cluster's, as istiod's aggregate credentials controller looks them up) and
 * the authorizer of its own cluster.
 */
public record ClusterCredentials(CredentialStore secrets, SecretReadAuthorizer authorizer) {
}
