package io.meshpilot.config.kube.ingress;

import io.kubernetes.client.common.KubernetesObject;
import io.kubernetes.client.informer.SharedIndexInformer;
import io.kubernetes.client.openapi.ApiException;
import io.kubernetes.client.openapi.apis.NetworkingV1Api;
import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.openapi.models.V1IngressLoadBalancerIngress;
import io.kubernetes.client.openapi.models.V1IngressLoadBalancerStatus;
import io.kubernetes.client.openapi.models.V1IngressStatus;
import io.kubernetes.client.openapi.models.V1LoadBalancerIngress;
import io.kubernetes.client.openapi.models.V1Node;
import io.kubernetes.client.openapi.models.V1NodeAddress;
import io.kubernetes.client.openapi.models.V1Pod;
import io.kubernetes.client.openapi.models.V1Service;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeErrors;
import io.meshpilot.kube.controllers.Backoff;
import io.meshpilot.kube.controllers.ControllerQueue;
import io.meshpilot.kube.controllers.ControllerQueue.Outcome;
import io.meshpilot.util.IpAddr;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * istiod's ingress status (leader of the {@code istio-leader} Lease only): every served
 * Ingress gets the addresses of the ingress Service ({@code ingressService} in
 * K8S_INGRESS_NS) in {@code status.loadBalancer.ingress}: its load balancer's IPs or
 * hostnames and its external IPs, or its external name; sorted as istiod sorts them. Written
 * only when they differ from what the Ingress shows; a write that loses a race (409) is retried.
 *
 * <p>An Ingress that stops being served while this replica leads (its class changed, or the
 * mesh config's ingress settings no longer select it) gets its load balancer status cleared
 * once, as istiod's status collection writes an empty status for an object it stops supporting
 * (pilot/pkg/status/collections.go {@code RegisterStatus}); what another controller writes there
 * afterwards is left alone. A deleted Ingress has no status left to clear.
 */
public final class IngressStatusWriter {
    private static final System.Logger LOG = System.getLogger(IngressStatusWriter.class.getName());
    private static final Backoff RETRY = Backoff.fixed(Duration.ofSeconds(1));

    private final IngressController ingresses;
    private final NetworkingV1Api api;
    private final ControllerQueue<String> queue = new ControllerQueue<>("ingress-status", RETRY, this::reconcile);
    /** The Ingresses served at the last conversion, to find the ones it withdrew; on the controller's thread. */
    private Set<String> lastServed = Set.of();
    /** Ingresses withdrawn from serving whose status is still to be cleared. */
    private final Set<String> withdrawn = ConcurrentHashMap.newKeySet();

    public IngressStatusWriter(KubeClient client, IngressController ingresses) {
        this.ingresses = ingresses;
        this.api = new NetworkingV1Api(client.apiClient());
        ingresses.onConverted(this::converted);
        queueServedOnChange(ingresses.pods(), p -> ingresses.ingressNamespace().equals(p.getMetadata().getNamespace()));
        queueServedOnChange(ingresses.nodes(), n -> true);
        // a status someone else wrote is written back (keys added outside the leader's term are dropped)
        ingresses.ingresses().addEventHandler(new ObjectChanges<>(
                (before, after) -> !Objects.equals(before.getStatus(), after.getStatus()),
                i -> queue.add(IngressController.key(i.getMetadata().getNamespace(), i.getMetadata().getName()))));
    }

    /** Queues every served Ingress when a change of {@code informer} may move the gateway pods' addresses. */
    private <T extends KubernetesObject> void queueServedOnChange(SharedIndexInformer<T> informer, Predicate<T> relevant) {
        informer.addEventHandler(new ObjectChanges<T>(obj -> {
            if (ingresses.mesh().getIngressService().isEmpty() && relevant.test(obj)) {
                queueServed();
            }
        }));
    }

    /**
     * Starts writing (the leader's term): every served Ingress now, then after each conversion.
     * Ingresses withdrawn before the term are not cleared: their status is the previous leader's.
     */
    public AutoCloseable lead() {
        withdrawn.clear();
        return queue.start(ingresses.synced(), this::queueServed);
    }

    /** After a conversion: the served Ingresses are queued, and so are the ones it withdrew. */
    private void converted() {
        Set<String> now = ingresses.served();
        for (String key : lastServed) {
            if (!now.contains(key) && ingresses.ingresses().getIndexer().getByKey(key) != null) {
                withdrawn.add(key);
                queue.add(key);
            }
        }
        withdrawn.removeAll(now);
        lastServed = now;
        queueServed();
    }

    private void queueServed() {
        ingresses.served().forEach(queue::add);
    }

    private Outcome reconcile(String key) {
        V1Ingress current = ingresses.ingresses().getIndexer().getByKey(key);
        boolean served = ingresses.served().contains(key);
        if (current == null || !served && !withdrawn.contains(key)) {
            withdrawn.remove(key);
            return Outcome.DONE;
        }
        List<V1IngressLoadBalancerIngress> want = served ? addresses() : List.of();
        List<V1IngressLoadBalancerIngress> have = current.getStatus() == null || current.getStatus().getLoadBalancer() == null
                || current.getStatus().getLoadBalancer().getIngress() == null ? List.of()
                : current.getStatus().getLoadBalancer().getIngress();
        if (want.equals(have)) {
            withdrawn.remove(key);
            return Outcome.DONE;
        }
        // a new object around the cached metadata and spec: the informer's copy is never changed
        V1Ingress updated = new V1Ingress().apiVersion("networking.k8s.io/v1").kind("Ingress")
                .metadata(current.getMetadata()).spec(current.getSpec())
                .status(new V1IngressStatus().loadBalancer(new V1IngressLoadBalancerStatus()
                        // cleared as istiod clears it: an empty status, no list
                        .ingress(served ? want : null)));
        try {
            api.replaceNamespacedIngressStatus(current.getMetadata().getName(), current.getMetadata().getNamespace(),
                    updated).execute();
            if (served) {
                LOG.log(Level.DEBUG, () -> "ingress " + key + " status: " + want);
            } else {
                withdrawn.remove(key);
                LOG.log(Level.INFO, "ingress " + key + " no longer served: its load balancer status cleared");
            }
            return Outcome.DONE;
        } catch (ApiException e) {
            if (Thread.currentThread().isInterrupted()) {
                return Outcome.DONE;
            }
            if (e.getCode() == 404) {
                withdrawn.remove(key);
                return Outcome.DONE; // deleted meanwhile
            }
            LOG.log(e.getCode() == 409 ? Level.DEBUG : Level.WARNING, "ingress " + key
                    + " status not written (retrying): HTTP " + e.getCode() + " " + KubeErrors.oneLine(e));
            return Outcome.RETRY;
        }
    }

    /**
     * istiod's runningAddresses: the ingress Service's addresses (nothing when it is not found);
     * without an ingressService, the external IPs of the node of the first running gateway pod
     * ({@link IngressClassSelection#gatewaySelector}) in K8S_INGRESS_NS that has a known node.
     */
    private List<V1IngressLoadBalancerIngress> addresses() {
        MeshConfig m = ingresses.mesh();
        if (m.getIngressService().isEmpty()) {
            return sorted(gatewayNodeAddresses(m));
        }
        V1Service svc = ingresses.services().getIndexer().getByKey(
                IngressController.key(ingresses.ingressNamespace(), m.getIngressService()));
        if (svc == null || svc.getSpec() == null) {
            return List.of();
        }
        List<String> found = new ArrayList<>();
        if ("ExternalName".equals(svc.getSpec().getType())) {
            found.add(svc.getSpec().getExternalName());
        } else {
            if (svc.getStatus() != null && svc.getStatus().getLoadBalancer() != null
                    && svc.getStatus().getLoadBalancer().getIngress() != null) {
                for (V1LoadBalancerIngress lb : svc.getStatus().getLoadBalancer().getIngress()) {
                    found.add(lb.getIp() == null || lb.getIp().isEmpty() ? lb.getHostname() : lb.getIp());
                }
            }
            if (svc.getSpec().getExternalIPs() != null) {
                found.addAll(svc.getSpec().getExternalIPs());
            }
        }
        return sorted(found);
    }

    private List<String> gatewayNodeAddresses(MeshConfig m) {
        Map<String, String> selector = IngressClassSelection.gatewaySelector(m);
        for (V1Pod pod : ingresses.pods().getIndexer().list()) {
            Map<String, String> labels = pod.getMetadata().getLabels() == null ? Map.of() : pod.getMetadata().getLabels();
            if (!ingresses.ingressNamespace().equals(pod.getMetadata().getNamespace())
                    || !labels.entrySet().containsAll(selector.entrySet())
                    || pod.getStatus() == null || !"Running".equals(pod.getStatus().getPhase())
                    || pod.getSpec() == null || pod.getSpec().getNodeName() == null) {
                continue;
            }
            V1Node node = ingresses.nodes().getIndexer().getByKey(pod.getSpec().getNodeName());
            if (node == null) {
                continue;
            }
            List<String> out = new ArrayList<>();
            if (node.getStatus() != null && node.getStatus().getAddresses() != null) {
                for (V1NodeAddress a : node.getStatus().getAddresses()) {
                    if ("ExternalIP".equals(a.getType()) && !out.contains(a.getAddress())) {
                        out.add(a.getAddress());
                    }
                }
            }
            return out;
        }
        return List.of();
    }

    /** IPs as {@code ip}, anything else as {@code hostname}; by hostname, then IP, as istiod sorts them. */
    private static List<V1IngressLoadBalancerIngress> sorted(List<String> found) {
        List<V1IngressLoadBalancerIngress> out = new ArrayList<>();
        for (String a : found) {
            if (a == null || a.isEmpty()) {
                continue;
            }
            out.add(IpAddr.isAddress(a) ? new V1IngressLoadBalancerIngress().ip(a)
                    : new V1IngressLoadBalancerIngress().hostname(a));
        }
        out.sort(Comparator.comparing((V1IngressLoadBalancerIngress i) -> Objects.requireNonNullElse(i.getHostname(), ""))
                .thenComparing(i -> Objects.requireNonNullElse(i.getIp(), "")));
        return out;
    }
}
