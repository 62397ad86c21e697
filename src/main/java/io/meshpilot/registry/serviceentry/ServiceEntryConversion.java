package io.meshpilot.registry.serviceentry;

import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.config.Config;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.WorkloadInstance;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * ServiceEntry and WorkloadEntry to the service model, as istiod converts them
 * (serviceentry/conversion.go): one service per host; ports with their protocol; addresses
 * as VIPs; resolution and location mapped; endpoints from inline entries, from selected
 * WorkloadEntries, or (DNS resolution without either) the host name itself.
 */
final class ServiceEntryConversion {
    static final String TLS_MODE_LABEL = "security.istio.io/tlsMode";

    private ServiceEntryConversion() {
    }

    static Resolution resolution(ServiceEntry.Resolution r) {
        return switch (r) {
            case STATIC -> Resolution.CLIENT_SIDE_LB;
            case DNS -> Resolution.DNS_LB;
            case DNS_ROUND_ROBIN -> Resolution.DNS_ROUND_ROBIN_LB;
            case DYNAMIC_DNS -> Resolution.DYNAMIC_DNS;
            default -> Resolution.PASSTHROUGH;
        };
    }

    static final String REDIRECTION_ANNOTATION = "ambient.istio.io/redirection";
    static final String REDIRECTION_ENABLED = "enabled";

    /** The services one ServiceEntry defines, one per host. */
    static List<Service> services(Config config, String provider, String clusterId) {
        ServiceEntry se = (ServiceEntry) config.spec();
        List<Port> ports = new ArrayList<>();
        for (ServicePort p : se.getPortsList()) {
            ports.add(new Port(p.getName(), p.getNumber(), Protocol.of(p.getProtocol(), null, p.getName())));
        }
        List<String> addresses = se.getAddressesList();
        String address = addresses.isEmpty() ? Service.UNSPECIFIED_IP : addresses.get(0);
        Map<String, List<String>> vips = addresses.isEmpty() ? Map.of() : Map.of(clusterId, List.copyOf(addresses));
        Instant created = config.creationTimestamp() == null ? Instant.EPOCH : config.creationTimestamp();
        List<Service> out = new ArrayList<>();
        for (String host : new LinkedHashSet<>(se.getHostsList())) {
            out.add(new Service(host, config.namespace(), ports, address, vips, "", resolution(se.getResolution()),
                    se.getLocation() == ServiceEntry.Location.MESH_EXTERNAL, new LinkedHashSet<>(se.getExportToList()),
                    config.labels(), provider, clusterId, created, config.key()));
        }
        return out;
    }

    /**
     * A WorkloadEntry (standalone or inline) as a workload instance; {@code annotations} are the
     * entry's (a ServiceEntry's for its inline endpoints).
     */
    static WorkloadInstance workload(String name, String namespace, WorkloadEntry we, Map<String, String> annotations,
                                     String trustDomain) {
        Map<String, Integer> portMap = new HashMap<>();
        we.getPortsMap().forEach((k, v) -> portMap.put(k, v));
        String sa = we.getServiceAccount().isEmpty() ? ""
                : "spiffe://" + trustDomain + "/ns/" + namespace + "/sa/" + we.getServiceAccount();
        Map<String, String> labels = we.getLabelsMap();
        if (REDIRECTION_ENABLED.equals(annotations.get(REDIRECTION_ANNOTATION))) {
            // captured by ztunnel: istiod's SupportsTunnel finds the entry HBONE in the ambient index
            // (workloads.go setTunnelProtocol); the synthetic label says the same to EDS, as for pods
            labels = new HashMap<>(labels);
            labels.put(IstioEndpoint.TUNNEL_LABEL, IstioEndpoint.TUNNEL_HTTP);
        }
        IstioEndpoint template = new IstioEndpoint(we.getAddress(), 0, "", labels, sa, we.getNetwork(),
                Locality.parse(we.getLocality()), tlsMode(we), we.getWeight(), IstioEndpoint.HealthStatus.HEALTHY, name,
                namespace);
        return new WorkloadInstance(name, namespace, "WorkloadEntry", template, portMap);
    }

    /**
     * istiod: the {@code security.istio.io/tlsMode} label when present, else "istio" when the
     * workload has a service account (a sidecar with an identity), else "disabled".
     */
    static String tlsMode(WorkloadEntry we) {
        String label = we.getLabelsMap().get(TLS_MODE_LABEL);
        if (label != null) {
            return label;
        }
        return we.getServiceAccount().isEmpty() ? IstioEndpoint.TLS_DISABLED : IstioEndpoint.TLS_ISTIO;
    }

    /** The endpoints of one service: each workload on each service port. */
    static List<IstioEndpoint> endpoints(Service service, ServiceEntry se, List<WorkloadInstance> workloads) {
        List<IstioEndpoint> out = new ArrayList<>();
        if (workloads.isEmpty() && se.getEndpointsCount() == 0 && !se.hasWorkloadSelector()
                && (service.resolution() == Resolution.DNS_LB || service.resolution() == Resolution.DNS_ROUND_ROBIN_LB)) {
            // DNS without endpoints: the proxy resolves the host name itself
            for (ServicePort p : se.getPortsList()) {
                out.add(new IstioEndpoint(service.hostname(), targetPort(p), p.getName(), Map.of(), "", "",
                        Locality.NONE, IstioEndpoint.TLS_DISABLED, 0, IstioEndpoint.HealthStatus.HEALTHY, "",
                        service.namespace()));
            }
            return out;
        }
        for (WorkloadInstance w : workloads) {
            IstioEndpoint t = w.endpoint();
            Map<String, String> labels = withCluster(t.labels(), service.clusterId());
            for (ServicePort p : se.getPortsList()) {
                Integer mapped = w.portMap().get(p.getName());
                int port = mapped != null && mapped > 0 ? mapped : targetPort(p);
                out.add(new IstioEndpoint(t.address(), port, p.getName(), labels, t.serviceAccount(), t.network(),
                        t.locality(), t.tlsMode(), t.lbWeight(), t.health(), t.workloadName(), t.namespace(),
                        t.sendUnhealthy()));
            }
        }
        return out;
    }

    /**
     * istiod's AugmentLabels for workload entries: the endpoint carries the cluster of the
     * registry that found it (telemetry's workload metadata and locality failover read it); a
     * pod's label, set by its own cluster's registry, is kept.
     */
    private static Map<String, String> withCluster(Map<String, String> labels, String clusterId) {
        if (clusterId == null || clusterId.isEmpty() || labels.containsKey(IstioEndpoint.CLUSTER_LABEL)) {
            return labels;
        }
        Map<String, String> out = new HashMap<>(labels);
        out.put(IstioEndpoint.CLUSTER_LABEL, clusterId);
        return out;
    }

    private static int targetPort(ServicePort p) {
        return p.getTargetPort() > 0 ? p.getTargetPort() : p.getNumber();
    }
}
