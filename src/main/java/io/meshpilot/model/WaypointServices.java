package io.meshpilot.model;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;

/**
 * Which services a waypoint serves (istiod's pilot/pkg/serviceregistry/ambient/waypoints.go,
 * GetUseWaypoint and fetchWaypointForService, read through PushContext.ServicesForWaypoint): a
 * service's own {@code istio.io/use-waypoint} label, else its namespace's, names the waypoint
 * Gateway, in the labelled object's namespace unless {@code istio.io/use-waypoint-namespace}
 * names another; {@code none} on the service opts it out of its namespace's waypoint. A
 * waypoint's own Service (managed by the mesh controller) never uses a waypoint. The waypoint
 * takes services only when its {@code istio.io/waypoint-for} is {@code service} (the default)
 * or {@code all}.
 *
 * <p>Immutable: built once per PushContext from its services and the namespaces' labels.
 */
public final class WaypointServices {
    public static final String USE_WAYPOINT = "istio.io/use-waypoint";
    public static final String USE_WAYPOINT_NAMESPACE = "istio.io/use-waypoint-namespace";
    public static final String WAYPOINT_FOR = "istio.io/waypoint-for";
    /** The label the deployment controller puts on a Gateway's pods and Service: the Gateway's name. */
    public static final String GATEWAY_NAME = "gateway.networking.k8s.io/gateway-name";
    public static final String MANAGED = "gateway.istio.io/managed";
    /** {@link #MANAGED}'s value on waypoints (istiod's constants.ManagedGatewayMeshControllerLabel). */
    public static final String MESH_CONTROLLER = "istio.io-mesh-controller";
    public static final String EAST_WEST_CONTROLLER = "istio.io-eastwest-controller";

    public static final WaypointServices NONE = new WaypointServices(Map.of(), Map.of());
    /** On a service, else its namespace: whether gateways send to the service's waypoint ("true", Go's ParseBool). */
    public static final String INGRESS_USE_WAYPOINT = "istio.io/ingress-use-waypoint";

    /** A waypoint Gateway: namespace and name. */
    public record Waypoint(String namespace, String name) {
        /**
         * The waypoint a proxy of type waypoint is: the Gateway its pod's
         * {@code gateway.networking.k8s.io/gateway-name} label names, in the proxy's namespace
         * (istiod finds it through the pod's Service, which the deployment controller selects by that label).
         */
        public static Optional<Waypoint> of(Proxy proxy) {
            String name = proxy.labels().getOrDefault(GATEWAY_NAME, "");
            return proxy.type() != Proxy.Type.WAYPOINT || name.isEmpty() ? Optional.empty()
                    : Optional.of(new Waypoint(proxy.namespace(), name));
        }

        /** The waypoint's Service hostname: the deployment controller names the Service after the Gateway. */
        public String hostname(String domainSuffix) {
            return name + "." + namespace + ".svc." + domainSuffix;
        }
    }

    /** The traffic a waypoint takes ({@code istio.io/waypoint-for}). */
    public enum TrafficType {
        SERVICE, WORKLOAD, ALL, NONE;

        /**
         * A waypoint proxy's {@code istio.io/waypoint-for}: the Gateway's label, which the
         * deployment controller copies to the pod; {@code service} when unset. An unknown value
         * takes nothing (istiod's fetchWaypointForService accepts only service and all).
         */
        public static TrafficType of(Proxy proxy) {
            return switch (proxy.labels().getOrDefault(WAYPOINT_FOR, "service")) {
                case "service" -> SERVICE;
                case "workload" -> WORKLOAD;
                case "all" -> ALL;
                default -> NONE;
            };
        }

        boolean servesServices() {
            return this == SERVICE || this == ALL;
        }
    }

    private final Map<Waypoint, List<Service>> byWaypoint;
    /** The waypoint of each service ({@code namespace/hostname}) whose gateways' traffic goes through it. */
    private final Map<String, Waypoint> ingress;

    private WaypointServices(Map<Waypoint, List<Service>> byWaypoint, Map<String, Waypoint> ingress) {
        this.byWaypoint = byWaypoint;
        this.ingress = ingress;
    }

    /**
     * The services of {@code services} by the waypoint they use, each list oldest first
     * (istiod's SortServicesByCreationTime), then by hostname.
     *
     * @param namespaceLabels a namespace's labels, empty when unknown
     */
    public static WaypointServices of(Collection<Service> services, Function<String, Map<String, String>> namespaceLabels) {
        Map<Waypoint, List<Service>> out = new HashMap<>();
        Map<String, Waypoint> ingress = new HashMap<>();
        for (Service s : services) {
            waypointOf(s, namespaceLabels).ifPresent(w -> {
                out.computeIfAbsent(w, k -> new ArrayList<>()).add(s);
                if (ingressUsesWaypoint(s.labels(), namespaceLabels.apply(s.namespace()))) {
                    ingress.put(s.namespace() + "/" + s.hostname(), w);
                }
            });
        }
        Comparator<Service> order = Comparator.comparing(Service::creationTime,
                Comparator.nullsFirst(Comparator.naturalOrder())).thenComparing(Service.BY_HOST);
        out.replaceAll((w, list) -> list.stream().sorted(order).toList());
        return new WaypointServices(Map.copyOf(out), Map.copyOf(ingress));
    }

    /** istiod's ingressUseWaypointFromLabels: the service's label, else its namespace's, parsed as Go's ParseBool. */
    static boolean ingressUsesWaypoint(Map<String, String> serviceLabels, Map<String, String> namespaceLabels) {
        String value = serviceLabels.containsKey(INGRESS_USE_WAYPOINT) || namespaceLabels == null
                ? serviceLabels.get(INGRESS_USE_WAYPOINT) : namespaceLabels.get(INGRESS_USE_WAYPOINT);
        return value != null && switch (value) {
            case "1", "t", "T", "TRUE", "true", "True" -> true;
            default -> false;
        };
    }

    /** The waypoint gateways send {@code s}'s traffic to ({@code istio.io/ingress-use-waypoint}), if any. */
    public Optional<Waypoint> ingressWaypoint(Service s) {
        return Optional.ofNullable(ingress.get(s.namespace() + "/" + s.hostname()));
    }

    /** The services whose gateway traffic goes through {@code waypoint}: their assignments hold its endpoints. */
    public List<Service> ingressUsers(Waypoint waypoint) {
        return byWaypoint.getOrDefault(waypoint, List.of()).stream()
                .filter(s -> waypoint.equals(ingress.get(s.namespace() + "/" + s.hostname()))).toList();
    }

    /** The waypoint {@code s} uses, if any. */
    static Optional<Waypoint> waypointOf(Service s, Function<String, Map<String, String>> namespaceLabels) {
        String managed = s.labels().getOrDefault(MANAGED, "");
        if (managed.equals(MESH_CONTROLLER) || managed.equals(EAST_WEST_CONTROLLER)) {
            return Optional.empty();
        }
        if (s.labels().containsKey(USE_WAYPOINT)) {
            return named(s.labels(), s.namespace());
        }
        Map<String, String> ns = namespaceLabels.apply(s.namespace());
        return ns == null || !ns.containsKey(USE_WAYPOINT) ? Optional.empty() : named(ns, s.namespace());
    }

    /** istiod's GetUseWaypoint on labels that carry {@code istio.io/use-waypoint}. */
    private static Optional<Waypoint> named(Map<String, String> labels, String defaultNamespace) {
        String name = labels.get(USE_WAYPOINT);
        if (name.equals("none") || name.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(new Waypoint(labels.getOrDefault(USE_WAYPOINT_NAMESPACE, defaultNamespace), name));
    }

    /** The services a waypoint proxy serves: none for another proxy type or a waypoint not for services. */
    public List<Service> servedBy(Proxy proxy) {
        if (!TrafficType.of(proxy).servesServices()) {
            return List.of();
        }
        return Waypoint.of(proxy).map(w -> byWaypoint.getOrDefault(w, List.of())).orElse(List.of());
    }

    /** Every waypoint some service uses. */
    public Map<Waypoint, List<Service>> all() {
        return byWaypoint;
    }
}
