package io.meshpilot.registry.kube;

import io.kubernetes.client.custom.IntOrString;
import io.kubernetes.client.openapi.models.V1ObjectMeta;
import io.kubernetes.client.openapi.models.V1Service;
import io.kubernetes.client.openapi.models.V1ServicePort;
import io.kubernetes.client.openapi.models.V1ServiceSpec;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Port;
import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import io.meshpilot.model.TrafficDistribution;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A Kubernetes Service as the mesh's service, as istiod converts it (serviceregistry/kube
 * ConvertService): hostname {@code <name>.<ns>.svc.<domain>}; ports with istiod's protocol
 * rules; the cluster IP (all of {@code clusterIPs} when dual-stack) as VIPs; headless services
 * (clusterIP None) resolve PASSTHROUGH; ExternalName services are mesh-external DNS services
 * whose one endpoint per port is the external name; the {@code networking.istio.io/exportTo}
 * annotation becomes the visibility.
 */
public final class KubeServiceConversion {
    private static final System.Logger LOG = System.getLogger(KubeServiceConversion.class.getName());
    public static final String EXPORT_TO_ANNOTATION = "networking.istio.io/exportTo";
    /** istiod's legacy spelling of {@code spec.trafficDistribution}, on the Service or its namespace. */
    public static final String TRAFFIC_DISTRIBUTION_ANNOTATION = "networking.istio.io/traffic-distribution";
    private static final String CLUSTER_IP_NONE = "None";
    private static final Set<Integer> WELL_KNOWN_TCP_PORTS = Set.of(25, 53, 3306, 27017);

    private KubeServiceConversion() {
    }

    public static String hostname(String name, String namespace, String domainSuffix) {
        return name + "." + namespace + ".svc." + domainSuffix;
    }

    /**
     * The service of a Kubernetes Service.
     *
     * @param registry the provider name the mesh shows ("Kubernetes")
     * @param namespaceAnnotations the annotations of the Service's namespace (null when it is not known)
     */
    public static Service service(V1Service svc, String domainSuffix, String clusterId, String registry,
                                  Map<String, String> namespaceAnnotations) {
        V1ObjectMeta meta = svc.getMetadata();
        V1ServiceSpec spec = svc.getSpec() == null ? new V1ServiceSpec() : svc.getSpec();
        Resolution resolution = Resolution.CLIENT_SIDE_LB;
        boolean external = "ExternalName".equals(spec.getType()) && notEmpty(spec.getExternalName());
        if (external) {
            // istiod now models these as aliases of the external host; without aliases in this
            // model they are what istiod made them before: DNS services of that name
            resolution = Resolution.DNS_LB;
        }
        List<String> addresses = List.of(Service.UNSPECIFIED_IP);
        if (CLUSTER_IP_NONE.equals(spec.getClusterIP())) {
            resolution = Resolution.PASSTHROUGH; // headless: the caller picks the pod, the proxy forwards
        } else if (notEmpty(spec.getClusterIP())) {
            addresses = spec.getClusterIPs() != null && spec.getClusterIPs().size() > 1
                    ? List.copyOf(spec.getClusterIPs()) : List.of(spec.getClusterIP());
        }
        List<Port> ports = new ArrayList<>();
        for (V1ServicePort p : spec.getPorts() == null ? List.<V1ServicePort>of() : spec.getPorts()) {
            if (p.getPort() == null) {
                // the API server never stores one; skipping it keeps the rest of the service usable
                LOG.log(System.Logger.Level.WARNING, "Service " + meta.getNamespace() + "/" + meta.getName()
                        + ": port " + p.getName() + " has no number; left out");
                continue;
            }
            ports.add(new Port(p.getName() == null ? "" : p.getName(), p.getPort(), protocol(p)));
        }
        Map<String, String> annotations = meta.getAnnotations() == null ? Map.of() : meta.getAnnotations();
        // no VIP (headless, ExternalName): none per cluster either, so proxies never bind 0.0.0.0 as one
        boolean noVip = addresses.get(0).equals(Service.UNSPECIFIED_IP);
        Instant created = meta.getCreationTimestamp() == null ? Instant.EPOCH : meta.getCreationTimestamp().toInstant();
        return new Service(hostname(meta.getName(), meta.getNamespace(), domainSuffix), meta.getNamespace(), ports,
                addresses.get(0), noVip ? Map.of() : Map.of(clusterId, addresses), "", resolution, external,
                exportTo(annotations.get(EXPORT_TO_ANNOTATION)), meta.getLabels(), registry, clusterId, created, null,
                trafficDistribution(svc, namespaceAnnotations));
    }

    /** The annotation's comma-separated namespaces ("." and "*" included); empty when unset. */
    static Set<String> exportTo(String annotation) {
        Set<String> out = new LinkedHashSet<>();
        if (annotation != null) {
            for (String ns : annotation.split(",")) {
                if (!ns.isBlank()) {
                    out.add(ns.trim());
                }
            }
        }
        return out;
    }

    /**
     * istiod's kube ConvertProtocol: UDP is UDP; else {@code appProtocol} when set (with
     * Kubernetes' {@code kubernetes.io/h2c}, {@code ws} and {@code wss} names), else the port
     * name; of either, a {@code grpc-web} prefix, else the part before the first '-'. Unknown
     * names stay unsupported (sniffed), except on the well-known TCP ports (SMTP, DNS, MySQL,
     * MongoDB), which are TCP.
     */
    public static Protocol protocol(V1ServicePort port) {
        if ("UDP".equals(port.getProtocol())) {
            return Protocol.UDP;
        }
        String name = port.getName() == null ? "" : port.getName();
        if (port.getAppProtocol() != null) {
            name = port.getAppProtocol();
            switch (name) {
                case "kubernetes.io/h2c" -> {
                    return Protocol.HTTP2;
                }
                case "kubernetes.io/ws" -> {
                    return Protocol.HTTP;
                }
                case "kubernetes.io/wss" -> {
                    return Protocol.HTTPS;
                }
                default -> { }
            }
        }
        if (name.toLowerCase(Locale.ROOT).startsWith("grpc-web")) {
            return Protocol.GRPC_WEB;
        }
        int dash = name.indexOf('-');
        Protocol p = Protocol.parse(dash >= 0 ? name.substring(0, dash) : name);
        if (p == Protocol.UNSUPPORTED && port.getPort() != null && WELL_KNOWN_TCP_PORTS.contains(port.getPort())) {
            return Protocol.TCP;
        }
        return p;
    }

    /**
     * istiod's GetTrafficDistribution: {@code spec.trafficDistribution}, else the service's
     * annotation, else its namespace's.
     */
    public static TrafficDistribution trafficDistribution(V1Service svc, Map<String, String> namespaceAnnotations) {
        return trafficDistribution(svc.getSpec() == null ? null : svc.getSpec().getTrafficDistribution(),
                svc.getMetadata().getAnnotations(), namespaceAnnotations);
    }

    /**
     * istiod's GetTrafficDistribution over its three inputs: the spec field (null for a
     * ServiceEntry, which has none), the object's annotations and its namespace's.
     */
    public static TrafficDistribution trafficDistribution(String spec, Map<String, String> annotations,
                                                          Map<String, String> namespaceAnnotations) {
        if (spec != null) {
            switch (spec) {
                case "PreferSameZone", "PreferClose" -> {
                    return TrafficDistribution.PREFER_SAME_ZONE;
                }
                case "PreferSameNode" -> {
                    return TrafficDistribution.PREFER_SAME_NODE;
                }
                default -> { }
            }
        }
        String value = annotations == null ? null : annotations.get(TRAFFIC_DISTRIBUTION_ANNOTATION);
        if (value == null || value.isEmpty()) {
            value = namespaceAnnotations == null ? null : namespaceAnnotations.get(TRAFFIC_DISTRIBUTION_ANNOTATION);
        }
        if (value == null || value.isEmpty()) {
            return TrafficDistribution.ANY;
        }
        return switch (value.toLowerCase(Locale.ROOT)) {
            case "preferclose", "prefersamezone" -> TrafficDistribution.PREFER_SAME_ZONE;
            case "prefersamenode" -> TrafficDistribution.PREFER_SAME_NODE;
            default -> TrafficDistribution.ANY;
        };
    }

    /** An ExternalName service's endpoints: the external name on every port (the proxy resolves it). */
    static List<IstioEndpoint> externalNameEndpoints(V1Service svc, Service service) {
        String name = svc.getSpec().getExternalName();
        List<IstioEndpoint> out = new ArrayList<>();
        for (Port p : service.ports()) {
            out.add(new IstioEndpoint(name, p.port(), p.name(), service.labels(), "", "", Locality.NONE,
                    IstioEndpoint.TLS_DISABLED, 0, IstioEndpoint.HealthStatus.HEALTHY, "", service.namespace()));
        }
        return out;
    }

    /**
     * Where a service port sends traffic on a workload selected by label (istiod's
     * findServiceTargetPort): a number, or a container port name to look up in the workload's
     * port map.
     *
     * @param explicitName the Service names the port: a workload without it is left out
     */
    record TargetPort(int number, String name, boolean explicitName) {
    }

    static TargetPort targetPort(V1Service svc, Port servicePort) {
        for (V1ServicePort p : svc.getSpec().getPorts() == null ? List.<V1ServicePort>of() : svc.getSpec().getPorts()) {
            if (servicePort.name().equals(p.getName()) || Integer.valueOf(servicePort.port()).equals(p.getPort())) {
                IntOrString t = p.getTargetPort();
                if (t == null) {
                    return new TargetPort(servicePort.port(), "", false);
                }
                if (t.isInteger() && t.getIntValue() > 0) {
                    return new TargetPort(t.getIntValue(), p.getName() == null ? "" : p.getName(), false);
                }
                return new TargetPort(servicePort.port(), t.isInteger() ? "" : t.getStrValue(), !t.isInteger());
            }
        }
        return new TargetPort(servicePort.port(), "", false);
    }

    private static boolean notEmpty(String s) {
        return s != null && !s.isEmpty();
    }
}
