package io.meshpilot.registry.ambient;

import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1ServiceSpec;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.AppProtocol;
import io.meshpilot.api.workload.IPFamilies;
import io.meshpilot.api.workload.LoadBalancing;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.Service;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.model.TrafficDistribution;
import io.meshpilot.registry.kube.KubeServiceConversion;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpSyntaxException;
import com.google.protobuf.ByteString;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A Kubernetes Service -> ztunnel's {@code istio.workload.Service}, as istiod's
 * serviceServiceBuilder and constructService (pilot/pkg/serviceregistry/ambient/services.go)
 * build it: hostname, the cluster IPs on the local network, ports with their numeric target
 * port and app protocol, the waypoint, load balancing from the internal traffic policy or
 * traffic distribution, IP families; always canonical. ExternalName services are not served
 * (ztunnel's DNS forwards them), and a service with an unparsable cluster IP is left out.
 */
final class KubeServiceAddresses {
    private static final System.Logger LOG = System.getLogger(KubeServiceAddresses.class.getName());

    private KubeServiceAddresses() {
    }

    /** The service, or null when ztunnel is sent none for it. */
    static ServiceInfo build(V1Service svc, AmbientContext ctx) {
        V1ServiceSpec spec = svc.getSpec();
        if (spec == null || "ExternalName".equals(spec.getType())) {
            return null;
        }
        String namespace = svc.getMetadata().getNamespace();
        String name = svc.getMetadata().getName();
        Map<String, String> labels = orEmpty(svc.getMetadata().getLabels());
        Service.Builder out = Service.newBuilder()
                .setName(name)
                .setNamespace(namespace)
                .setHostname(KubeServiceConversion.hostname(name, namespace, ctx.domainSuffix()))
                .setCanonical(true)
                .setIpFamilies(ipFamilies(spec.getIpFamilies()));
        Map<Integer, ServiceInfo.PortName> portNames = new HashMap<>();
        for (V1ServicePort p : spec.getPorts() == null ? List.<V1ServicePort>of() : spec.getPorts()) {
            boolean numericTarget = p.getTargetPort() != null && p.getTargetPort().isInteger();
            out.addPorts(Port.newBuilder()
                    .setServicePort(p.getPort())
                    .setTargetPort(numericTarget ? p.getTargetPort().getIntValue() : 0)
                    .setAppProtocol(appProtocol(p)));
            portNames.put(p.getPort(), new ServiceInfo.PortName(p.getName() == null ? "" : p.getName(),
                    p.getTargetPort() == null || numericTarget ? "" : p.getTargetPort().getStrValue()));
        }
        for (String vip : vips(spec)) {
            try {
                out.addAddresses(NetworkAddress.newBuilder().setNetwork(ctx.network())
                        .setAddress(ByteString.copyFrom(IpAddr.parse(vip).bytes())));
            } catch (IpSyntaxException e) {
                LOG.log(Level.WARNING, "ambient: service " + namespace + "/" + name + " left out: cluster IP "
                        + e.getMessage());
                return null;
            }
        }
        Map<String, String> nsLabels = ctx.namespaceLabels(namespace);
        Waypoints.Waypoint waypoint = null;
        if (!"istio.io-mesh-controller".equals(labels.get(MANAGED_BY)) && !"istio.io-eastwest-controller".equals(labels.get(MANAGED_BY))) {
            // a waypoint or an east-west gateway has no waypoint itself (istiod's fetchWaypointForService)
            waypoint = ctx.waypoints().forTarget(labels, namespace, nsLabels)
                    .filter(Waypoints.Waypoint::forServices).orElse(null);
        }
        if (waypoint != null) {
            out.setWaypoint(waypoint.address());
        }
        LoadBalancing lb = loadBalancing(svc, ctx.namespaceAnnotations(namespace));
        if (lb != null) {
            out.setLoadBalancing(lb);
        }
        Service built = out.build();
        return new ServiceInfo(ServiceInfo.Source.SERVICE, namespace,
                AddressInfo.of(Address.newBuilder().setService(built).build()),
                orEmpty(spec.getSelector()), portNames, waypoint);
    }

    /** {@code gateway.istio.io/managed}: "istio.io-mesh-controller" marks a waypoint's own Service. */
    private static final String MANAGED_BY = "gateway.istio.io/managed";

    /** istiod's getVIPs: {@code clusterIPs}, else {@code clusterIP}; "None" and empty are no VIP. */
    private static List<String> vips(V1ServiceSpec spec) {
        List<String> ips = spec.getClusterIPs();
        if (ips == null || ips.isEmpty()) {
            ips = spec.getClusterIP() == null ? List.of() : List.of(spec.getClusterIP());
        }
        return ips.stream().filter(ip -> !ip.isEmpty() && !ip.equals("None")).toList();
    }

    private static IPFamilies ipFamilies(List<String> families) {
        if (families == null || families.isEmpty()) {
            return IPFamilies.AUTOMATIC;
        }
        if (families.size() == 2) {
            return IPFamilies.DUAL;
        }
        return families.getFirst().equals("IPv4") ? IPFamilies.IPV4_ONLY : IPFamilies.IPV6_ONLY;
    }

    /** istiod's toAppProtocolFromKube over the port's protocol as the Kubernetes registry reads it. */
    static AppProtocol appProtocol(V1ServicePort p) {
        return appProtocol(KubeServiceConversion.protocol(p));
    }

    /** istiod's toAppProtocolFromProtocol. */
    static AppProtocol appProtocol(Protocol protocol) {
        return switch (protocol) {
            case HTTP -> AppProtocol.HTTP11;
            case HTTP2 -> AppProtocol.HTTP2;
            case GRPC -> AppProtocol.GRPC;
            case TLS, HTTPS -> AppProtocol.TLS;
            case TCP -> AppProtocol.TCP;
            default -> AppProtocol.UNKNOWN;
        };
    }

    /**
     * The internal traffic policy Local: this node only, strictly; else the traffic
     * distribution's failover order; {@code publishNotReadyAddresses} lets unhealthy endpoints in.
     */
    private static LoadBalancing loadBalancing(V1Service svc, Map<String, String> nsAnnotations) {
        V1ServiceSpec spec = svc.getSpec();
        LoadBalancing.Builder lb = null;
        if ("Local".equals(spec.getInternalTrafficPolicy())) {
            lb = LoadBalancing.newBuilder().addRoutingPreference(LoadBalancing.Scope.NODE)
                    .setMode(LoadBalancing.Mode.STRICT);
        } else {
            lb = failover(KubeServiceConversion.trafficDistribution(svc, nsAnnotations));
        }
        if (Boolean.TRUE.equals(spec.getPublishNotReadyAddresses())) {
            lb = (lb == null ? LoadBalancing.newBuilder() : lb).setHealthPolicy(LoadBalancing.HealthPolicy.ALLOW_ALL);
        }
        return lb == null ? null : lb.build();
    }

    /** istiod's preferSameZoneLoadBalancer and preferSameNodeLoadBalancer; null for no preference. */
    static LoadBalancing.Builder failover(TrafficDistribution distribution) {
        return switch (distribution) {
            case PREFER_SAME_ZONE -> failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                    LoadBalancing.Scope.ZONE);
            case PREFER_SAME_NODE -> failover(LoadBalancing.Scope.NETWORK, LoadBalancing.Scope.REGION,
                    LoadBalancing.Scope.ZONE, LoadBalancing.Scope.SUBZONE, LoadBalancing.Scope.NODE);
            case ANY -> null;
        };
    }

    private static LoadBalancing.Builder failover(LoadBalancing.Scope... order) {
        return LoadBalancing.newBuilder().addAllRoutingPreference(List.of(order)).setMode(LoadBalancing.Mode.FAILOVER);
    }

    static Map<String, String> orEmpty(Map<String, String> m) {
        return m == null ? Map.of() : m;
    }
}
