package io.meshpilot.bootstrap;

import io.meshpilot.kube.KubeClient;
import io.meshpilot.registry.multicluster.RemoteSecretController;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.credentials.KubeSecretCredentials;
import io.meshpilot.security.kube.SecretAccessReviews;

/**
 * istiod's multicluster credentials controller: a remote cluster's Secrets (read through its
 * own client) and its RBAC serve the gateways of that cluster, and leave with it.
 */
record RemoteCredentials(CredentialsController credentials) implements RemoteSecretController.ClusterHandler {
    @Override
    public void clusterAdded(String clusterId, String secret, KubeClient client) {
        credentials.addCluster(clusterId, new KubeSecretCredentials(client, clusterId),
                new SecretAccessReviews(client.apiClient()));
    }

    @Override
    public void clusterDeleted(String clusterId) {
        credentials.removeCluster(clusterId);
    }
}
