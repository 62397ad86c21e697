package io.meshpilot.registry.ambient;

import com.google.protobuf.ByteString;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry.Resolution;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.LoadBalancing;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Port;
import io.meshpilot.api.workload.Service;
import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.registry.kube.KubeServiceConversion;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpPrefix;
import io.meshpilot.util.IpSyntaxException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A ServiceEntry -> ztunnel's {@code istio.workload.Service}, one per host, as istiod's
 * serviceEntriesInfo and constructServiceEntries (pilot/pkg/serviceregistry/ambient/services.go)
 * build them: the entry's name and namespace, the host, its addresses (IPs and CIDRs, masked, on
 * the local network) or else the addresses istiod's IP auto-allocation wrote into
 * {@code status.addresses} for that host, ports with the target port (the port itself when
 * unset) and the app protocol, subject alt names, the waypoint, and load balancing (passthrough
 * for resolution NONE, else the traffic distribution annotation). Not canonical: which of the
 * services of one hostname is canonical is the index's choice (istiod's selectWorkloadServices).
 */
final class ServiceEntryAddresses {
    private static final System.Logger LOG = System.getLogger(ServiceEntryAddresses.class.getName());
    /** label.NetworkingEnableAutoallocateIp: "false" opts an entry out of auto-allocated addresses. */
    static final String AUTOALLOCATE_LABEL = "networking.istio.io/enable-autoallocate-ip";

    private ServiceEntryAddresses() {
    }

    /** The entry's services, in host order; none when an address is neither an IP nor a CIDR (as istiod). */
    static List<ServiceInfo> build(Config config, AmbientContext ctx) {
        ServiceEntry se = (ServiceEntry) config.spec();
        List<NetworkAddress> addresses = new ArrayList<>();
        for (String a : se.getAddressesList()) {
            try {
                addresses.add(networkAddress(IpPrefix.parseAddressOrPrefix(a), ctx.network()));
            } catch (IpSyntaxException e) {
                LOG.log(Level.WARNING, "ambient: ServiceEntry " + config.namespace() + "/" + config.name()
                        + " left out: address " + e.getMessage());
                return List.of();
            }
        }
        Map<String, List<NetworkAddress>> assigned = autoAllocates(config, se) ? statusAddresses(config.status(),
                ctx.network()) : Map.of();
        List<Port> ports = new ArrayList<>();
        Map<Integer, ServiceInfo.PortName> portNames = new HashMap<>();
        for (ServicePort p : se.getPortsList()) {
            ports.add(Port.newBuilder().setServicePort(p.getNumber())
                    .setTargetPort(p.getTargetPort() == 0 ? p.getNumber() : p.getTargetPort())
                    .setAppProtocol(KubeServiceAddresses.appProtocol(Protocol.parse(p.getProtocol()))).build());
            portNames.put(p.getNumber(), new ServiceInfo.PortName(p.getName(), ""));
        }
        LoadBalancing lb = loadBalancing(config, se, ctx);
        Map<String, String> labels = config.labels();
        var waypoint = ctx.waypoints().forTarget(labels, config.namespace(), ctx.namespaceLabels(config.namespace()))
                .filter(Waypoints.Waypoint::forServices);
        if (se.getResolution() == Resolution.DYNAMIC_DNS && waypoint.isEmpty()) {
            LOG.log(Level.WARNING, "ambient: ServiceEntry " + config.namespace() + "/" + config.name()
                    + " has dynamic DNS resolution but no valid waypoint");
        }
        List<ServiceInfo> out = new ArrayList<>(se.getHostsCount());
        for (String host : se.getHostsList()) {
            Service.Builder s = Service.newBuilder()
                    .setName(config.name())
                    .setNamespace(config.namespace())
                    .setHostname(host)
                    .addAllPorts(ports)
                    .addAllSubjectAltNames(se.getSubjectAltNamesList());
            if (!addresses.isEmpty()) {
                s.addAllAddresses(addresses);
            } else if (se.getResolution() != Resolution.NONE
                    && (!host.startsWith("*") || se.getResolution() == Resolution.DYNAMIC_DNS)) {
                // auto-allocated addresses are for wildcard hosts only with dynamic DNS
                s.addAllAddresses(assigned.getOrDefault(host, List.of()));
            }
            waypoint.ifPresent(w -> s.setWaypoint(w.address()));
            if (lb != null) {
                s.setLoadBalancing(lb);
            }
            out.add(new ServiceInfo(ServiceInfo.Source.SERVICE_ENTRY, config.namespace(),
                    AddressInfo.of(Address.newBuilder().setService(s).build()),
                    se.getWorkloadSelector().getLabelsMap(), portNames, waypoint.orElse(null)));
        }
        return out;
    }

    /** istiod's ShouldV2AutoAllocateIP (with PILOT_ENABLE_IP_AUTOALLOCATE at its default, on). */
    private static boolean autoAllocates(Config config, ServiceEntry se) {
        return se.getResolution() != Resolution.NONE && se.getAddressesCount() == 0
                && !"false".equalsIgnoreCase(config.labels().get(AUTOALLOCATE_LABEL));
    }

    /** istiod's GetHostAddressesFromServiceEntry: {@code status.addresses} by host; values that are no IP skipped. */
    private static Map<String, List<NetworkAddress>> statusAddresses(Struct status, String network) {
        Map<String, List<NetworkAddress>> out = new LinkedHashMap<>();
        Value list = status.getFieldsMap().get("addresses");
        if (list == null) {
            return out;
        }
        for (Value v : list.getListValue().getValuesList()) {
            Map<String, Value> fields = v.getStructValue().getFieldsMap();
            String host = fields.getOrDefault("host", Value.getDefaultInstance()).getStringValue();
            String value = fields.getOrDefault("value", Value.getDefaultInstance()).getStringValue();
            if (IpAddr.isAddress(value)) {
                IpAddr ip = IpAddr.parse(value);
                out.computeIfAbsent(host, h -> new ArrayList<>()).add(networkAddress(new IpPrefix(ip, ip.bitLen()), network));
            }
        }
        return out;
    }

    /** istiod's toNetworkAddressFromCidr: the masked address, with a length only for a prefix wider than one IP. */
    private static NetworkAddress networkAddress(IpPrefix prefix, String network) {
        NetworkAddress.Builder na = NetworkAddress.newBuilder().setNetwork(network)
                .setAddress(ByteString.copyFrom(prefix.maskedBytes()));
        if (!prefix.singleIp()) {
            na.setLength(prefix.bits());
        }
        return na.build();
    }

    /** Resolution NONE passes traffic through to the address called; else the traffic distribution's preference. */
    private static LoadBalancing loadBalancing(Config config, ServiceEntry se, AmbientContext ctx) {
        if (se.getResolution() == Resolution.NONE) {
            return LoadBalancing.newBuilder().setMode(LoadBalancing.Mode.PASSTHROUGH)
                    .setHealthPolicy(LoadBalancing.HealthPolicy.ALLOW_ALL).build();
        }
        LoadBalancing.Builder lb = KubeServiceAddresses.failover(KubeServiceConversion.trafficDistribution(null,
                config.annotations(), ctx.namespaceAnnotations(config.namespace())));
        return lb == null ? null : lb.build();
    }
}
