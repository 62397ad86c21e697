package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One service as istiod's {@code /debug/registryz} prints its {@code model.Service} with Go's
 * encoding/json (pilot/pkg/model/service.go): the fields without a json tag keep their Go
 * names ({@code Attributes}, {@code Resolution}, {@code MeshExternal}, {@code ResourceVersion}),
 * {@code Resolution} is Go's integer, {@code clusterVIPs} is an {@code AddressMap}
 * ({@code {"Addresses": {cluster: [ip]}}}) and {@code ExportTo} a set (an object of empty
 * objects). Kiali reads this endpoint.
 */
final class RegistryzJson {
    private RegistryzJson() {
    }

    /** istiod's model.Resolution values (an iota, in istiod's declaration order). */
    static int resolution(Resolution r) {
        return switch (r) {
            case CLIENT_SIDE_LB -> 0;
            case DNS_LB -> 1;
            case PASSTHROUGH -> 2;
            case DNS_ROUND_ROBIN_LB -> 3;
            case DYNAMIC_DNS -> 5; // 4 is Alias, which has no counterpart here
        };
    }

    /**
     * The service; {@code source} (the config object it came from) is ours and extra, which
     * the Go readers of this JSON skip.
     */
    static JsonObject service(Service s) {
        JsonObject o = new JsonObject();
        o.add("Attributes", attributes(s));
        JsonArray ports = new JsonArray();
        for (Port p : s.ports()) {
            JsonObject po = new JsonObject();
            if (!p.name().isEmpty()) {
                po.addProperty("name", p.name());
            }
            po.addProperty("port", p.port());
            po.addProperty("protocol", p.protocol().label());
            ports.add(po);
        }
        if (!ports.isEmpty()) {
            o.add("ports", ports);
        }
        o.addProperty("creationTime", s.creationTime().toString());
        o.addProperty("hostname", s.hostname());
        o.add("clusterVIPs", addressMap(s.clusterVips())); // a struct: Go's omitempty never leaves it out
        if (!s.defaultAddress().isEmpty()) {
            o.addProperty("defaultAddress", s.defaultAddress());
        }
        if (!s.autoAllocatedIpv4().isEmpty()) {
            o.addProperty("autoAllocatedIPv4Address", s.autoAllocatedIpv4());
        }
        o.addProperty("Resolution", resolution(s.resolution()));
        o.addProperty("MeshExternal", s.meshExternal());
        o.addProperty("ResourceVersion", "");
        if (s.configKey() != null) {
            o.addProperty("source", s.configKey().toString());
        }
        return o;
    }

    /** ServiceAttributes, with the embedded K8sAttributes' fields we know inlined as Go does. */
    private static JsonObject attributes(Service s) {
        JsonObject a = new JsonObject();
        a.addProperty("ServiceRegistry", s.registry());
        a.addProperty("Name", name(s));
        a.addProperty("Namespace", s.namespace());
        a.add("Labels", RegistryJson.map(s.labels()));
        JsonObject exportTo = new JsonObject();
        s.exportTo().stream().sorted().forEach(e -> exportTo.add(e, new JsonObject()));
        a.add("ExportTo", exportTo);
        return a;
    }

    /** istiod names a Kubernetes service by its Service object, a ServiceEntry's by its host. */
    private static String name(Service s) {
        if ("Kubernetes".equals(s.registry())) {
            int dot = s.hostname().indexOf('.');
            return dot < 0 ? s.hostname() : s.hostname().substring(0, dot);
        }
        return s.hostname();
    }

    private static JsonObject addressMap(Map<String, List<String>> byCluster) {
        JsonObject addresses = new JsonObject();
        new TreeMap<>(byCluster).forEach((cluster, ips) -> addresses.add(cluster, RegistryJson.strings(ips)));
        JsonObject o = new JsonObject();
        o.add("Addresses", addresses);
        return o;
    }
}
