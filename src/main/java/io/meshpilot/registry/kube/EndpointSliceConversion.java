package io.meshpilot.registry.kube;

import io.kubernetes.client.openapi.models.DiscoveryV1EndpointPort;
import io.kubernetes.client.openapi.models.V1Endpoint;
import io.kubernetes.client.openapi.models.V1EndpointConditions;
import io.kubernetes.client.openapi.models.V1EndpointSlice;
import io.kubernetes.client.openapi.models.V1ObjectReference;
import io.meshpilot.model.IstioEndpoint;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.BiFunction;

/**
 * The endpoints of one EndpointSlice, as istiod's endpointslice controller builds them: each
 * address on each slice port, the port's name being the service port it serves; health from
 * the ready/serving/terminating conditions; workload metadata from the pod the endpoint
 * refers to (or, without a reference, the pod with that IP in the namespace).
 */
public final class EndpointSliceConversion {
    /** The label Kubernetes puts on a slice naming its Service. */
    public static final String SERVICE_NAME_LABEL = "kubernetes.io/service-name";
    /** Slices of multi-cluster service imports: istiod leaves them to the MCS controller. */
    static final String MCS_SERVICE_NAME_LABEL = "multicluster.kubernetes.io/service-name";

    private EndpointSliceConversion() {
    }

    /** What a slice endpoint's pod contributes, or why there is none. */
    public sealed interface PodLookup {
        /** The endpoint's pod part (see {@link PodConversion#template}). */
        record Found(IstioEndpoint template) implements PodLookup {
        }

        /** The endpoint names a pod this registry has not seen yet: leave the address out until it arrives. */
        record Missing() implements PodLookup {
        }

        /** No pod backs the endpoint (a manually managed slice): the address alone. */
        record None(IstioEndpoint template) implements PodLookup {
        }
    }

    /** The converted endpoints and the addresses whose pods have not arrived yet. */
    public record Result(List<IstioEndpoint> endpoints, List<String> waitingForPods) {
    }

    /** The Service a slice belongs to, or "" (then it is no Service's slice). */
    public static String serviceName(V1EndpointSlice slice) {
        Map<String, String> labels = slice.getMetadata().getLabels();
        if (labels == null || labels.containsKey(MCS_SERVICE_NAME_LABEL)) {
            return "";
        }
        return labels.getOrDefault(SERVICE_NAME_LABEL, "");
    }

    /**
     * istiod's endpointHealthStatus: ready (or unset) is healthy; not ready but terminating is
     * terminating (never sent); else unhealthy (sent only when unhealthy endpoints are).
     */
    public static IstioEndpoint.HealthStatus health(V1EndpointConditions conditions) {
        if (conditions == null || conditions.getReady() == null || conditions.getReady()) {
            return IstioEndpoint.HealthStatus.HEALTHY;
        }
        if (conditions.getTerminating() == null || conditions.getTerminating()) {
            return IstioEndpoint.HealthStatus.TERMINATING;
        }
        return IstioEndpoint.HealthStatus.UNHEALTHY;
    }

    /**
     * @param pods          the pod part of one address: (address, targetRef) to a lookup
     * @param sendUnhealthy whether the service sends its unhealthy endpoints (PILOT_SEND_UNHEALTHY_ENDPOINTS,
     *                      or a traffic distribution that needs the health of every endpoint)
     */
    public static Result endpoints(V1EndpointSlice slice, BiFunction<String, V1ObjectReference, PodLookup> pods,
                                   boolean sendUnhealthy) {
        List<IstioEndpoint> out = new ArrayList<>();
        List<String> waiting = new ArrayList<>();
        if ("FQDN".equals(slice.getAddressType()) || slice.getEndpoints() == null) {
            return new Result(out, waiting); // istiod does not support FQDN slices either
        }
        List<DiscoveryV1EndpointPort> ports = slice.getPorts() == null ? List.of() : slice.getPorts();
        for (V1Endpoint e : slice.getEndpoints()) {
            IstioEndpoint.HealthStatus health = health(e.getConditions());
            for (String address : e.getAddresses() == null ? List.<String>of() : e.getAddresses()) {
                PodLookup lookup = pods.apply(address, e.getTargetRef());
                IstioEndpoint t;
                switch (lookup) {
                    case PodLookup.Missing m -> {
                        waiting.add(address);
                        continue;
                    }
                    case PodLookup.Found f -> t = f.template();
                    case PodLookup.None n -> t = n.template();
                }
                for (DiscoveryV1EndpointPort p : ports) {
                    int number = p.getPort() == null ? 0 : p.getPort();
                    String name = p.getName() == null ? "" : p.getName();
                    out.add(new IstioEndpoint(address, number, name, t.labels(), t.serviceAccount(), t.network(),
                            t.locality(), t.tlsMode(), 0, health, t.workloadName(),
                            t.namespace().isEmpty() ? slice.getMetadata().getNamespace() : t.namespace(),
                            sendUnhealthy));
                }
            }
        }
        return new Result(out, waiting);
    }
}
