package io.meshpilot.registry.ambient;

import com.google.protobuf.ByteString;
import com.google.protobuf.UInt32Value;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry.Resolution;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.Locality;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.PortList;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.WorkloadStatus;
import io.meshpilot.api.workload.WorkloadType;
import io.meshpilot.config.Config;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.util.IpAddr;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * WorkloadEntries, and the inline {@code endpoints} of ServiceEntries, -> ztunnel's
 * {@code istio.workload.Workload}, as istiod's workloadEntryWorkloadBuilder and
 * serviceEntryWorkloadBuilder (pilot/pkg/serviceregistry/ambient/workloads.go) build them. Every
 * entry is a workload, whatever its namespace's data-plane mode (as every pod is); it is HBONE
 * only when marked as a pod is (the redirection annotation, a native tunnel label). The address
 * is an IP, else sent as the workload's hostname; the entry's network, else the local one;
 * always healthy and of type POD (istiod's stand-in for a VM); weight is capacity.
 */
final class WorkloadEntryWorkloads {
    /** annotation.IoIstioAutoRegistrationGroup: an auto-registered entry's WorkloadGroup is its workload. */
    static final String AUTO_REGISTRATION_GROUP = "istio.io/autoRegistrationGroup";
    /** label.ServiceWorkloadName. */
    static final String WORKLOAD_NAME_LABEL = "service.istio.io/workload-name";

    private WorkloadEntryWorkloads() {
    }

    /** istiod's generateWorkloadEntryUID. */
    static String uid(String clusterId, String namespace, String name) {
        return clusterId + "/networking.istio.io/WorkloadEntry/" + namespace + "/" + name;
    }

    /** istiod's generateServiceEntryUID: an inline endpoint by its address (or the host it stands for). */
    static String inlineUid(String clusterId, String namespace, String serviceEntry, String address) {
        return clusterId + "/networking.istio.io/ServiceEntry/" + namespace + "/" + serviceEntry + "/" + address;
    }

    /**
     * A WorkloadEntry's workload, its labels those of the spec and the metadata (the metadata's
     * winning), as istiod's ConvertClientWorkloadEntry merges them.
     *
     * @param services                the services of its namespace: those selecting the entry are listed
     * @param kubernetesServicesSelect PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES: Kubernetes Services select
     *                                 entries too, not only ServiceEntries
     */
    static AddressInfo build(Config config, AmbientContext ctx, Iterable<ServiceInfo> services,
                             boolean kubernetesServicesSelect) {
        WorkloadEntry we = (WorkloadEntry) config.spec();
        Map<String, String> labels = labels(config);
        String namespace = config.namespace();
        List<ServiceInfo> selecting = new ArrayList<>();
        for (ServiceInfo s : services) {
            if (s.selects(labels) && (kubernetesServicesSelect || s.source() == ServiceInfo.Source.SERVICE_ENTRY)) {
                selecting.add(s);
            }
        }
        String workloadName = config.annotations().getOrDefault(AUTO_REGISTRATION_GROUP,
                labels.getOrDefault(WORKLOAD_NAME_LABEL, config.name()));
        Workload.Builder w = workload(we, ctx, uid(ctx.clusterId(), namespace, config.name()), config.name(), namespace,
                selecting)
                .addAllAuthorizationPolicies(ctx.policies().policies(namespace, labels))
                .setWorkloadName(workloadName)
                .setCanonicalName(PodWorkloads.canonicalName(labels, workloadName))
                .setCanonicalRevision(PodWorkloads.canonicalRevision(labels));
        Waypoints.Waypoint waypoint = bindWaypoint(w, labels, namespace, ctx);
        w.addAllAuthorizationPolicies(ImplicitWaypointPolicies.forWorkload(ctx, waypoint, selecting));
        PodWorkloads.setTunnelProtocol(w, labels, config.annotations());
        return AddressInfo.of(Address.newBuilder().setWorkload(w).build());
    }

    /** {@code spec.labels} under the metadata's labels. */
    static Map<String, String> labels(Config config) {
        Map<String, String> out = new HashMap<>(((WorkloadEntry) config.spec()).getLabelsMap());
        out.putAll(config.labels());
        return out;
    }

    /**
     * A ServiceEntry's inline endpoints as workloads, named after the entry, each listing the
     * entry's services. An entry with DNS resolution, no endpoints and no workload selector
     * stands for its hosts: one workload per host, addressed by that hostname.
     *
     * @param services the entry's services the index holds (none: it lost its hosts to other services)
     */
    static List<AddressInfo> inline(Config config, AmbientContext ctx, List<ServiceInfo> services) {
        ServiceEntry se = (ServiceEntry) config.spec();
        List<WorkloadEntry> endpoints = se.getEndpointsList();
        boolean implicit = endpoints.isEmpty() && !se.hasWorkloadSelector()
                && (se.getResolution() == Resolution.DNS || se.getResolution() == Resolution.DNS_ROUND_ROBIN
                || se.getResolution() == Resolution.DYNAMIC_DNS);
        if (services.isEmpty() || (endpoints.isEmpty() && !implicit)) {
            return List.of();
        }
        if (implicit) {
            endpoints = services.stream().map(s -> WorkloadEntry.newBuilder()
                    .setAddress(s.address().address().getService().getHostname()).build()).toList();
        }
        String namespace = config.namespace();
        List<AddressInfo> out = new ArrayList<>(endpoints.size());
        for (int i = 0; i < endpoints.size(); i++) {
            WorkloadEntry endpoint = endpoints.get(i);
            List<ServiceInfo> listed = implicit ? List.of(services.get(i)) : services;
            Workload.Builder w = workload(endpoint, ctx,
                    inlineUid(ctx.clusterId(), namespace, config.name(), endpoint.getAddress()), config.name(), namespace,
                    listed)
                    .addAllAuthorizationPolicies(ctx.policies().policies(namespace, config.labels()))
                    .setWorkloadName(config.name())
                    .setCanonicalName(PodWorkloads.canonicalName(config.labels(), config.name()))
                    .setCanonicalRevision(PodWorkloads.canonicalRevision(config.labels()));
            Waypoints.Waypoint waypoint = implicit ? null : bindWaypoint(w, endpoint.getLabelsMap(), namespace, ctx);
            w.addAllAuthorizationPolicies(ImplicitWaypointPolicies.forWorkload(ctx, waypoint, listed));
            PodWorkloads.setTunnelProtocol(w, config.labels(), config.annotations());
            out.add(AddressInfo.of(Address.newBuilder().setWorkload(w).build()));
        }
        return out;
    }

    /** What the two kinds of entry share: the spec's fields. */
    private static Workload.Builder workload(WorkloadEntry we, AmbientContext ctx, String uid, String name,
                                             String namespace, List<ServiceInfo> services) {
        Workload.Builder w = Workload.newBuilder()
                .setUid(uid)
                .setName(name)
                .setNamespace(namespace)
                .setNetwork(we.getNetwork().isEmpty() ? ctx.network() : we.getNetwork())
                .setClusterId(ctx.clusterId())
                .setServiceAccount(we.getServiceAccount())
                .setStatus(WorkloadStatus.HEALTHY)
                .setTrustDomain(ctx.trustDomain())
                .setWorkloadType(WorkloadType.POD);
        if (IpAddr.isAddress(we.getAddress())) {
            w.addAddresses(ByteString.copyFrom(IpAddr.parse(we.getAddress()).bytes()));
        } else {
            w.setHostname(we.getAddress());
        }
        if (we.getWeight() > 0) {
            w.setCapacity(UInt32Value.of(we.getWeight()));
        }
        // istiod's getWorkloadEntryLocality: region/zone/subzone
        String[] locality = we.getLocality().split("/", 3);
        if (!we.getLocality().isEmpty()) {
            w.setLocality(Locality.newBuilder().setRegion(locality[0])
                    .setZone(locality.length > 1 ? locality[1] : "").setSubzone(locality.length > 2 ? locality[2] : ""));
        }
        services.forEach(s -> w.putServices(s.key(), ports(s, we.getPortsMap())));
        return w;
    }

    /**
     * istiod's computeWaypoint for a workload: its own label, else its namespace's, for workload
     * traffic; the waypoint set on {@code w}, or null.
     */
    private static Waypoints.Waypoint bindWaypoint(Workload.Builder w, Map<String, String> labels, String namespace,
                                                   AmbientContext ctx) {
        Waypoints.Waypoint waypoint = ctx.waypoints().forTarget(labels, namespace, ctx.namespaceLabels(namespace))
                .filter(Waypoints.Waypoint::forWorkloads).orElse(null);
        if (waypoint != null) {
            w.setWaypoint(waypoint.address());
        }
        return waypoint;
    }

    /**
     * istiod's constructServicesFromWorkloadEntry for one service: a Service's named target port
     * is the entry's port of that name (left out when it has none), else the entry's port named
     * like the service port overrides the target; a ServiceEntry's port is matched by its name,
     * falling back to the port itself when no target is set.
     */
    private static PortList ports(ServiceInfo svc, Map<String, Integer> entryPorts) {
        PortList.Builder out = PortList.newBuilder();
        for (Port p : svc.address().address().getService().getPortsList()) {
            int target = p.getTargetPort();
            ServiceInfo.PortName named = svc.portNames().get(p.getServicePort());
            if (named != null && svc.source() == ServiceInfo.Source.SERVICE && !named.targetPortName().isEmpty()) {
                Integer found = entryPorts.get(named.targetPortName());
                if (found == null) {
                    continue;
                }
                target = found;
            } else if (named != null) {
                Integer found = entryPorts.get(named.portName());
                if (found != null) {
                    target = found;
                } else if (target == 0 && svc.source() == ServiceInfo.Source.SERVICE_ENTRY) {
                    target = p.getServicePort();
                }
            }
            out.addPorts(Port.newBuilder().setServicePort(p.getServicePort()).setTargetPort(target));
        }
        return out.build();
    }
}
