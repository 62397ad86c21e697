package io.meshpilot.config.kube.gateway;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * What the Gateway API conversion asks of the service registries: istiod's
 * {@code GatewayContext} (pilot/pkg/config/kube/gatewaycommon/context.go), which answers from
 * the PushContext's service index. Backend references are checked against it, and a
 * Gateway's addresses and Programmed condition come from its Services' instances.
 * Implemented outside this package (the registries are above it in the layering).
 */
public interface GatewayServices {
    /** No services at all. */
    GatewayServices NONE = new GatewayServices() {
        @Override
        public Optional<ServiceView> service(String hostname, String namespace) {
            return Optional.empty();
        }

        @Override
        public List<String> namespacesOf(String hostname) {
            return List.of();
        }
    };

    /** The Service (or ServiceEntry host) {@code hostname} in {@code namespace}, as the ServiceIndex's HostnameAndNamespace. */
    Optional<ServiceView> service(String hostname, String namespace);

    /** The namespaces that have a service named {@code hostname}, sorted (for istiod's "found in namespace(s)" warning). */
    List<String> namespacesOf(String hostname);

    /**
     * The Kubernetes Service or ServiceEntry a policy's {@code targetRef} names (istiod's
     * ReferenceSet over its Service and ServiceEntry informers, backend_policies.go); empty when
     * there is none, or for any other kind.
     *
     * @param kind {@link PolicyTarget#SERVICE} or {@link PolicyTarget#SERVICE_ENTRY}
     */
    default Optional<PolicyTarget> policyTarget(String kind, String namespace, String name) {
        return Optional.empty();
    }

    /**
     * The ServiceEntry {@code namespace/name}: its hosts a route with it as parentRef serves and
     * its labels (istiod's ServiceEntries collection in route_collections.go and conversion.go).
     */
    default Optional<PolicyTarget> serviceEntry(String namespace, String name) {
        return policyTarget(PolicyTarget.SERVICE_ENTRY, namespace, name);
    }

    /**
     * A Kubernetes Service or ServiceEntry as a policy attached to it, or a route with it as
     * parent, sees it.
     *
     * @param hosts  a ServiceEntry's hosts, in its order; empty for a Service (its host is {@code name.namespace.svc.<domain>})
     * @param ports  the ports with their names, in the object's order
     * @param labels the object's labels ({@code istio.io/use-waypoint} decides whether a route is ours)
     */
    record PolicyTarget(String kind, String namespace, String name, List<String> hosts, List<NamedPort> ports,
                        Map<String, String> labels) {
        public static final String SERVICE = "Service";
        public static final String SERVICE_ENTRY = "ServiceEntry";

        public PolicyTarget {
            hosts = List.copyOf(hosts);
            ports = List.copyOf(ports);
            labels = Map.copyOf(labels);
        }

        /** A target without labels. */
        public PolicyTarget(String kind, String namespace, String name, List<String> hosts, List<NamedPort> ports) {
            this(kind, namespace, name, hosts, ports, Map.of());
        }

        /** The number of the port called {@code portName}. */
        public Optional<Integer> portNumber(String portName) {
            return ports.stream().filter(p -> p.name().equals(portName)).map(NamedPort::number).findFirst();
        }
    }

    record NamedPort(String name, int number) {
    }

    /**
     * One service as the conversion needs it.
     *
     * @param type               Kubernetes Service type ({@code ClusterIP}, {@code LoadBalancer}, ...), empty for ServiceEntries
     * @param ports              the service ports
     * @param addresses          cluster addresses (ClusterIP, dual stack included)
     * @param externalAddresses  load balancer ingress addresses of every cluster
     * @param endpointPorts      by service port: the endpoint (target) port of each instance, empty when it has none
     */
    record ServiceView(String hostname, String namespace, Map<String, String> labels, String type,
                       List<Integer> ports, List<String> addresses, List<String> externalAddresses,
                       Map<Integer, List<Integer>> endpointPorts) {
        public ServiceView {
            labels = Map.copyOf(labels);
            ports = List.copyOf(ports);
            addresses = List.copyOf(addresses);
            externalAddresses = List.copyOf(externalAddresses);
            endpointPorts = Map.copyOf(endpointPorts);
        }
    }
}
