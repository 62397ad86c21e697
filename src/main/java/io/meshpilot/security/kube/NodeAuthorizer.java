package io.meshpilot.security.kube;

import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.models.V1Pod;
import io.meshpilot.features.TrustedNodeAccounts;
import io.meshpilot.security.Authenticator.AuthenticationException;
import io.meshpilot.security.Authenticator.Caller;
import io.meshpilot.security.Authenticator.KubernetesInfo;
import io.meshpilot.security.ImpersonationPolicy;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * istiod's ClusterNodeAuthorizer (security/pkg/server/ca/node_auth.go): a node agent (ztunnel)
 * whose service account is in CA_TRUSTED_NODE_ACCOUNTS, authenticated by a token bound to its
 * pod, may ask for the identity of a service account that has a pod on the agent's own node.
 * As istiod, the caller's pod must still be the one its token names (uid) and run as the token's
 * service account, and pods that failed count for nothing (istiod's informer leaves out
 * {@code status.phase=Failed}). Answered from the client's pod informer, as istiod answers from
 * its own, indexed by service account and node ({@value #BY_ACCOUNT_AND_NODE}): ztunnel asks once
 * per identity on its node at start and at every rotation, so a DaemonSet restart must cost the
 * API server nothing. The informer is eventually consistent: a token of a pod the watch has not
 * delivered yet is refused, and ztunnel retries. The reasons are istiod's; they reach the log, not
 * the caller.
 */
public final class NodeAuthorizer implements ImpersonationPolicy {
    private static final Pattern SPIFFE_ID = Pattern.compile("spiffe://[^/]+/ns/([^/]+)/sa/([^/]+)");
    private static final String FAILED = "Failed";
    /** Pod informer index: {@code namespace/serviceAccount/node} of each scheduled pod that has not failed. */
    static final String BY_ACCOUNT_AND_NODE = "meshpilot-sa-node";

    private final SharedIndexInformer<V1Pod> pods;
    private final TrustedNodeAccounts trusted;

    /**
     * @param pods every pod of the cluster, not started yet (the index is added here; an informer
     *             cannot take one once it runs)
     */
    public NodeAuthorizer(SharedIndexInformer<V1Pod> pods, TrustedNodeAccounts trusted) {
        this.pods = pods;
        this.trusted = trusted;
        if (!pods.getIndexer().getIndexers().containsKey(BY_ACCOUNT_AND_NODE)) {
            pods.addIndexers(Map.of(BY_ACCOUNT_AND_NODE, NodeAuthorizer::accountAndNode));
        }
    }

    /** istiod's saNode index, without the failed pods its field selector leaves out. */
    private static List<String> accountAndNode(V1Pod pod) {
        if (failed(pod) || pod.getSpec() == null) {
            return List.of();
        }
        String node = pod.getSpec().getNodeName();
        String account = pod.getSpec().getServiceAccountName();
        if (node == null || node.isEmpty() || account == null || account.isEmpty()) {
            return List.of();
        }
        return List.of(key(pod.getMetadata().getNamespace(), account, node));
    }

    private static String key(String namespace, String serviceAccount, String node) {
        return namespace + "/" + serviceAccount + "/" + node;
    }

    @Override
    public void authorize(Caller caller, String requestedIdentity) throws AuthenticationException {
        KubernetesInfo info = caller.kubernetes();
        if (info == null) {
            throw new AuthenticationException("caller " + caller.identities() + " was not authenticated by a "
                    + "Kubernetes token, so it is not a trusted node account");
        }
        if (!trusted.contains(info.namespace(), info.serviceAccount())) {
            throw new AuthenticationException("caller " + info.namespace() + "/" + info.serviceAccount()
                    + " is not allowed to impersonate (not in CA_TRUSTED_NODE_ACCOUNTS)");
        }
        Matcher requested = SPIFFE_ID.matcher(requestedIdentity);
        if (!requested.matches()) {
            throw new AuthenticationException("failed to validate impersonated identity "
                    + KubeJwtAuthenticator.clip(requestedIdentity));
        }
        if (info.podName().isEmpty()) {
            throw new AuthenticationException("pod name not found in the caller's token (a pod-bound token is needed)");
        }
        V1Pod callerPod = callerPod(info);
        if (!info.podUid().equals(callerPod.getMetadata().getUid())) {
            throw new AuthenticationException("pod found, but UID does not match: " + callerPod.getMetadata().getUid()
                    + " vs " + info.podUid());
        }
        String podAccount = callerPod.getSpec() == null ? null : callerPod.getSpec().getServiceAccountName();
        if (!info.serviceAccount().equals(podAccount)) {
            throw new AuthenticationException("pod found, but ServiceAccount does not match: " + podAccount + " vs "
                    + info.serviceAccount());
        }
        String node = callerPod.getSpec().getNodeName();
        if (node == null || node.isEmpty()) {
            throw new AuthenticationException("caller pod " + info.namespace() + "/" + info.podName()
                    + " is not scheduled on a node");
        }
        String ns = requested.group(1);
        String sa = requested.group(2);
        if (pods.getIndexer().byIndex(BY_ACCOUNT_AND_NODE, key(ns, sa, node)).isEmpty()) {
            throw new AuthenticationException("no instances of \"" + ns + "/" + sa + "\" found on node \"" + node + "\"");
        }
    }

    private static boolean failed(V1Pod pod) {
        return pod.getStatus() != null && FAILED.equals(pod.getStatus().getPhase());
    }

    private V1Pod callerPod(KubernetesInfo info) throws AuthenticationException {
        if (!pods.hasSynced()) {
            throw new AuthenticationException("pod " + info.namespace() + "/" + info.podName()
                    + " not found (pods not listed from the API server yet)");
        }
        V1Pod pod = pods.getIndexer().getByKey(info.namespace() + "/" + info.podName());
        if (pod == null || failed(pod)) {
            throw new AuthenticationException("pod " + info.namespace() + "/" + info.podName() + " not found");
        }
        return pod;
    }
}
