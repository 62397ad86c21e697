package io.meshpilot.registry.kube;

import io.kubernetes.client.openapi.models.V1LoadBalancerIngress;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.meshpilot.model.NetworkGateway;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The east-west gateways a Kubernetes Service stands for (istiod's kube networkManager,
 * extractGatewaysFromService): a Service labelled {@code topology.istio.io/network} is its
 * network's gateway on the port named by {@code networking.istio.io/gatewayPort} (15443 by
 * default), if it has that port; else a Service that meshNetworks names as a
 * {@code registryServiceName} of this cluster's network. Its addresses are the load balancer's
 * ({@code status.loadBalancer.ingress}, IP or hostname) and {@code spec.externalIPs}.
 */
final class ServiceGateways {
    private static final System.Logger LOG = System.getLogger(ServiceGateways.class.getName());
    static final String GATEWAY_PORT_LABEL = "networking.istio.io/gatewayPort";
    /** istiod's DefaultNetworkGatewayPort: cross-network mTLS, routed by SNI. */
    static final int DEFAULT_GATEWAY_PORT = 15443;

    private ServiceGateways() {
    }

    /**
     * @param host                the Service's hostname
     * @param registryServiceName the meshNetworks gateways (network and port, no address) by
     *                            service hostname, for this cluster
     */
    static List<NetworkGateway> of(V1Service svc, String host, String clusterId,
                                   Map<String, List<NetworkGateway>> registryServiceName) {
        List<NetworkGateway> unaddressed = unaddressed(svc, host, registryServiceName);
        if (unaddressed.isEmpty()) {
            return List.of();
        }
        List<NetworkGateway> out = new ArrayList<>();
        for (String address : addresses(svc)) {
            for (NetworkGateway g : unaddressed) {
                out.add(new NetworkGateway(g.network(), clusterId, address, g.port()));
            }
        }
        return List.copyOf(out);
    }

    /** The networks and ports the Service is a gateway for, without addresses. */
    private static List<NetworkGateway> unaddressed(V1Service svc, String host,
                                                    Map<String, List<NetworkGateway>> registryServiceName) {
        Map<String, String> labels = svc.getMetadata().getLabels() == null ? Map.of() : svc.getMetadata().getLabels();
        String network = labels.getOrDefault(PodConversion.NETWORK_LABEL, "");
        if (network.isEmpty()) {
            return registryServiceName.getOrDefault(host, List.of());
        }
        int port = DEFAULT_GATEWAY_PORT;
        String portLabel = labels.get(GATEWAY_PORT_LABEL);
        if (portLabel != null) {
            try {
                port = Integer.parseInt(portLabel);
            } catch (NumberFormatException e) {
                LOG.log(Level.WARNING, "Service " + key(svc) + ": " + GATEWAY_PORT_LABEL + " \"" + portLabel
                        + "\" is not a port number; the gateway port stays " + DEFAULT_GATEWAY_PORT);
            }
        }
        if (!hasPort(svc, port)) {
            LOG.log(Level.WARNING, "Service " + key(svc) + " is labelled as the gateway of network " + network
                    + " but has no port " + port + "; not used as a gateway");
            return List.of();
        }
        return List.of(new NetworkGateway(network, "", "", port));
    }

    private static boolean hasPort(V1Service svc, int port) {
        List<V1ServicePort> ports = svc.getSpec() == null || svc.getSpec().getPorts() == null ? List.of()
                : svc.getSpec().getPorts();
        return ports.stream().anyMatch(p -> p.getPort() != null && p.getPort() == port);
    }

    /** istiod's ClusterExternalAddresses of a Service: its load balancer's IPs or hostnames, then its external IPs. */
    private static Set<String> addresses(V1Service svc) {
        Set<String> out = new LinkedHashSet<>();
        if (svc.getSpec() != null && "LoadBalancer".equals(svc.getSpec().getType()) && svc.getStatus() != null
                && svc.getStatus().getLoadBalancer() != null && svc.getStatus().getLoadBalancer().getIngress() != null) {
            for (V1LoadBalancerIngress i : svc.getStatus().getLoadBalancer().getIngress()) {
                if (i.getIp() != null && !i.getIp().isEmpty()) {
                    out.add(i.getIp());
                } else if (i.getHostname() != null && !i.getHostname().isEmpty()) {
                    out.add(i.getHostname());
                }
            }
        }
        if (svc.getSpec() != null && svc.getSpec().getExternalIPs() != null) {
            out.addAll(svc.getSpec().getExternalIPs());
        }
        return out;
    }

    private static String key(V1Service svc) {
        return svc.getMetadata().getNamespace() + "/" + svc.getMetadata().getName();
    }
}
