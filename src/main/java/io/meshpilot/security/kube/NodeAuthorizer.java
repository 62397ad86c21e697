package io.meshpilot.security.kube;

import io.meshpilot.features.TrustedNodeAccounts;
import io.kubernetes.client.openapi.ApiClient;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.CoreV1Api;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1PodList;
import io.meshpilot.security.Authenticator.AuthenticationException;
import io.meshpilot.security.Authenticator.Caller;
import io.meshpilot.security.Authenticator.KubernetesInfo;
import io.meshpilot.security.ImpersonationPolicy;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * istiod's ClusterNodeAuthorizer (security/pkg/server/ca/node_auth.go): a node agent (ztunnel)
 * whose service account is in CA_TRUSTED_NODE_ACCOUNTS, authenticated by a token bound to its
 * pod, may ask for the identity of a service account that has a pod on the agent's own node.
 * As istiod, the caller's pod must still be the one its token names (uid) and run as the token's
 * service account, and pods that failed count for nothing (istiod's informer leaves out
 * {@code status.phase=Failed}). istiod reads pods from an informer; here the two lookups go to
 * the API server when asked, bounded by {@link KubeJwtAuthenticator#REVIEW_TIMEOUT}, since
 * impersonation is rare. The reasons are istiod's; they reach the log, not the caller.
 */
public final class NodeAuthorizer implements ImpersonationPolicy {
    private static final Pattern SPIFFE_ID = Pattern.compile("spiffe://[^/]+/ns/([^/]+)/sa/([^/]+)");
    private static final String FAILED = "Failed";

    private final ApiClient api;
    private final TrustedNodeAccounts trusted;

    public NodeAuthorizer(ApiClient api, TrustedNodeAccounts trusted) {
        this.api = api;
        this.trusted = trusted;
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
        for (V1Pod pod : podsOnNode(ns, node).getItems()) {
            if (!failed(pod) && pod.getSpec() != null && sa.equals(pod.getSpec().getServiceAccountName())) {
                return;
            }
        }
        throw new AuthenticationException("no instances of \"" + ns + "/" + sa + "\" found on node \"" + node + "\"");
    }

    private static boolean failed(V1Pod pod) {
        return pod.getStatus() != null && FAILED.equals(pod.getStatus().getPhase());
    }

    private V1Pod callerPod(KubernetesInfo info) throws AuthenticationException {
        try {
            okhttp3.Call call = new CoreV1Api(api).readNamespacedPod(info.podName(), info.namespace()).buildCall(null);
            V1Pod pod = this.<V1Pod>execute(call, V1Pod.class);
            if (failed(pod)) {
                throw new AuthenticationException("pod " + info.namespace() + "/" + info.podName() + " not found (failed)");
            }
            return pod;
        } catch (ApiException e) {
            if (e.getCode() == 404) {
                throw new AuthenticationException("pod " + info.namespace() + "/" + info.podName() + " not found");
            }
            throw unavailable(e);
        }
    }

    private V1PodList podsOnNode(String namespace, String node) throws AuthenticationException {
        try {
            okhttp3.Call call = new CoreV1Api(api).listNamespacedPod(namespace)
                    .fieldSelector("spec.nodeName=" + node).buildCall(null);
            return this.<V1PodList>execute(call, V1PodList.class);
        } catch (ApiException e) {
            throw unavailable(e);
        }
    }

    private <T> T execute(okhttp3.Call call, Class<T> type) throws ApiException {
        call.timeout().timeout(KubeJwtAuthenticator.REVIEW_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return api.<T>execute(call, type).getData();
    }

    private static AuthenticationException unavailable(ApiException e) {
        String why = e.getCode() == 0 ? String.valueOf(e.getCause() == null ? e.getMessage() : e.getCause())
                : "HTTP " + e.getCode();
        return new AuthenticationException("Kubernetes API unavailable for the node check ("
                + KubeJwtAuthenticator.clip(why) + ")");
    }
}
