package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** JSON shapes of services and endpoints for the admin API and istiod's debug endpoints. */
final class RegistryJson {
    private RegistryJson() {
    }

    /** istiod's names for resolutions. */
    static String resolution(Resolution r) {
        return switch (r) {
            case CLIENT_SIDE_LB -> "ClientSideLB";
            case DNS_LB -> "DNSLB";
            case DNS_ROUND_ROBIN_LB -> "DNSRoundRobinLB";
            case PASSTHROUGH -> "Passthrough";
            case DYNAMIC_DNS -> "DynamicDNS";
        };
    }

    static JsonObject service(Service s, List<IstioEndpoint> endpoints) {
        JsonObject o = new JsonObject();
        o.addProperty("hostname", s.hostname());
        o.addProperty("namespace", s.namespace());
        o.addProperty("address", s.defaultAddress());
        JsonObject vips = new JsonObject();
        new TreeMap<>(s.clusterVips()).forEach((c, list) -> vips.add(c, strings(list)));
        o.add("clusterVIPs", vips);
        if (!s.autoAllocatedIpv4().isEmpty()) {
            o.addProperty("autoAllocatedAddress", s.autoAllocatedIpv4());
        }
        o.addProperty("resolution", resolution(s.resolution()));
        o.addProperty("meshExternal", s.meshExternal());
        o.add("exportTo", strings(s.exportTo().stream().sorted().toList()));
        o.add("labels", map(s.labels()));
        o.addProperty("registry", s.registry());
        o.addProperty("cluster", s.clusterId());
        o.addProperty("creationTime", s.creationTime().toString());
        if (s.configKey() != null) {
            o.addProperty("source", s.configKey().toString());
        }
        JsonArray ports = new JsonArray();
        for (Port p : s.ports()) {
            JsonObject po = new JsonObject();
            po.addProperty("name", p.name());
            po.addProperty("port", p.port());
            po.addProperty("protocol", p.protocol().label());
            ports.add(po);
        }
        o.add("ports", ports);
        if (endpoints != null) {
            JsonArray eps = new JsonArray();
            endpoints.forEach(e -> eps.add(endpoint(e)));
            o.add("endpoints", eps);
        }
        return o;
    }

    static JsonObject endpoint(IstioEndpoint e) {
        JsonObject o = new JsonObject();
        o.addProperty("address", e.address());
        o.addProperty("port", e.endpointPort());
        o.addProperty("servicePortName", e.servicePortName());
        o.add("labels", map(e.labels()));
        o.addProperty("serviceAccount", e.serviceAccount());
        o.addProperty("network", e.network());
        o.addProperty("locality", e.locality().toString());
        o.addProperty("tlsMode", e.tlsMode());
        o.addProperty("weight", e.lbWeight());
        o.addProperty("health", e.health().name());
        o.addProperty("workload", e.workloadName());
        o.addProperty("namespace", e.namespace());
        return o;
    }

    static JsonArray strings(Collection<String> values) {
        JsonArray a = new JsonArray();
        values.forEach(a::add);
        return a;
    }

    static JsonObject map(Map<String, String> m) {
        JsonObject o = new JsonObject();
        new TreeMap<>(m).forEach(o::addProperty);
        return o;
    }
}
