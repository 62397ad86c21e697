package io.meshpilot.model;

import io.meshpilot.config.ConfigKey;
import java.time.Instant;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A service as the mesh sees it (istiod's model.Service), whatever registry it came from.
 *
 * @param hostname          fully qualified name, e.g. reviews.default.svc.cluster.local
 * @param defaultAddress    the VIP, or "0.0.0.0" when there is none
 * @param clusterVips       VIPs per cluster (the aggregate merges them across clusters)
 * @param autoAllocatedIpv4 address istiod allocated for an entry without one (DNS proxying), or ""
 * @param meshExternal      ServiceEntry location MESH_EXTERNAL
 * @param exportTo          namespaces that may see it ("*", "." or names); empty = mesh default
 * @param registry          the registry that provided it (e.g. "External" for ServiceEntries)
 * @param configKey         the config object that defined it (the ServiceEntry), null otherwise
 * @param trafficDistribution where the service prefers its traffic to go (Kubernetes Services only)
 */
public record Service(String hostname, String namespace, List<Port> ports, String defaultAddress,
                      Map<String, List<String>> clusterVips, String autoAllocatedIpv4, Resolution resolution,
                      boolean meshExternal, Set<String> exportTo, Map<String, String> labels, String registry,
                      String clusterId, Instant creationTime, ConfigKey configKey,
                      TrafficDistribution trafficDistribution) {
    /** The order registries list services in: by hostname, then namespace (one host may be in several). */
    public static final Comparator<Service> BY_HOST =
            Comparator.comparing(Service::hostname).thenComparing(Service::namespace);


    public static final String UNSPECIFIED_IP = "0.0.0.0";

    public Service {
        ports = List.copyOf(ports);
        clusterVips = clusterVips == null ? Map.of() : Map.copyOf(clusterVips);
        autoAllocatedIpv4 = autoAllocatedIpv4 == null ? "" : autoAllocatedIpv4;
        exportTo = exportTo == null ? Set.of() : Set.copyOf(exportTo);
        labels = labels == null ? Map.of() : Map.copyOf(labels);
        trafficDistribution = trafficDistribution == null ? TrafficDistribution.ANY : trafficDistribution;
    }

    /** A service without a traffic distribution preference (every registry but Kubernetes). */
    public Service(String hostname, String namespace, List<Port> ports, String defaultAddress,
                   Map<String, List<String>> clusterVips, String autoAllocatedIpv4, Resolution resolution,
                   boolean meshExternal, Set<String> exportTo, Map<String, String> labels, String registry,
                   String clusterId, Instant creationTime, ConfigKey configKey) {
        this(hostname, namespace, ports, defaultAddress, clusterVips, autoAllocatedIpv4, resolution, meshExternal,
                exportTo, labels, registry, clusterId, creationTime, configKey, TrafficDistribution.ANY);
    }

    public Optional<Port> port(int number) {
        return ports.stream().filter(p -> p.port() == number).findFirst();
    }

    public Optional<Port> portByName(String name) {
        return ports.stream().filter(p -> p.name().equals(name)).findFirst();
    }

    /** Hostnames with a leading "*." are wildcard services. */
    public boolean wildcard() {
        return hostname.startsWith("*");
    }

    public Service withClusterVips(Map<String, List<String>> vips) {
        return new Service(hostname, namespace, ports, defaultAddress, vips, autoAllocatedIpv4, resolution, meshExternal,
                exportTo, labels, registry, clusterId, creationTime, configKey, trafficDistribution);
    }

    public Service withAutoAllocatedIpv4(String ip) {
        return new Service(hostname, namespace, ports, defaultAddress, clusterVips, ip, resolution, meshExternal,
                exportTo, labels, registry, clusterId, creationTime, configKey, trafficDistribution);
    }
}
