package io.meshpilot.registry.ambient;

import io.kubernetes.client.openapi.models.V1Namespace;
import io.kubernetes.client.openapi.models.V1Node;
import java.util.Map;
import java.util.function.Function;

/**
 * What building one workload or service reads besides the object itself: the cluster, the
 * network and trust domain in force, the namespaces and nodes (as the informers hold them),
 * the waypoints and the policy seam.
 *
 * @param network     the local network (the system namespace's {@code topology.istio.io/network}), or ""
 * @param trustDomain the mesh's trust domain as istiod's pickTrustDomain sends it: "" for cluster.local
 * @param namespaces  a namespace by name, or null
 * @param nodes       a node by name, or null
 * @param allowFromWaypoint PILOT_AUTO_ALLOW_WAYPOINT_POLICY: workloads name their waypoints' implicit policies
 */
record AmbientContext(String clusterId, String domainSuffix, String network, String trustDomain,
                      Function<String, V1Namespace> namespaces, Function<String, V1Node> nodes,
                      Waypoints waypoints, WorkloadPolicies policies, boolean allowFromWaypoint) {

    /** Without the implicit waypoint policies. */
    AmbientContext(String clusterId, String domainSuffix, String network, String trustDomain,
                   Function<String, V1Namespace> namespaces, Function<String, V1Node> nodes,
                   Waypoints waypoints, WorkloadPolicies policies) {
        this(clusterId, domainSuffix, network, trustDomain, namespaces, nodes, waypoints, policies, false);
    }

    /** istiod's pickTrustDomain: the mesh's trust domain, sent only when it is not the default. */
    static String sentTrustDomain(String meshTrustDomain) {
        return meshTrustDomain == null || meshTrustDomain.equals("cluster.local") ? "" : meshTrustDomain;
    }

    Map<String, String> namespaceLabels(String namespace) {
        V1Namespace ns = namespaces.apply(namespace);
        return ns == null || ns.getMetadata() == null ? Map.of() : KubeServiceAddresses.orEmpty(ns.getMetadata().getLabels());
    }

    Map<String, String> namespaceAnnotations(String namespace) {
        V1Namespace ns = namespaces.apply(namespace);
        return ns == null || ns.getMetadata() == null ? Map.of()
                : KubeServiceAddresses.orEmpty(ns.getMetadata().getAnnotations());
    }
}
