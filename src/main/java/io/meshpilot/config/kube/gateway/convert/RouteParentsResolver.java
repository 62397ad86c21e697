package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.GatewayServices.PolicyTarget;
import io.meshpilot.config.kube.gateway.GatewayServices.ServiceView;
import io.meshpilot.config.kube.gateway.ParentKey;
import io.meshpilot.config.kube.gateway.ParentListener;
import io.meshpilot.config.kube.gateway.RouteParents;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.validation.networking.HostNames;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A route's parentRefs against the listeners they name (istiod's extractParentReferenceInfo and
 * referenceAllowed): every listener of a named Gateway or ListenerSet, checked for port,
 * sectionName, hostnames, namespace and route kind; a Service or ServiceEntry parentRef (GAMMA)
 * is the mesh, accepted when the Service or ServiceEntry exists. Parent kinds istiod does not know are skipped, as they may
 * belong to another controller.
 */
final class RouteParentsResolver {
    /** The mesh as a parent: every route kind, no hostnames (istiod's RouteParents.fetch for meshParentKey). */
    static final ParentListener MESH_LISTENER = new ParentListener(RouteParentRef.MESH,
            GatewayApiKinds.ROUTE_KINDS.stream().map(k -> GatewayApiKinds.GROUP + "/" + k).toList(),
            List.of(), "", "", 0, "");
    static final String USE_WAYPOINT = "istio.io/use-waypoint";
    static final String USE_WAYPOINT_NAMESPACE = "istio.io/use-waypoint-namespace";

    private final GatewayApiInputs inputs;
    private final RouteParents parents;

    RouteParentsResolver(GatewayApiInputs inputs, RouteParents parents) {
        this.inputs = inputs;
        this.parents = parents;
    }

    /** The listeners the route's parentRefs matched, in istiod's order (by the parentRef's string form). */
    List<RouteParentRef> resolve(GatewayApiObject route) {
        JsonObject spec = route.spec();
        List<String> hostnames = JsonFields.strings(spec, "hostnames");
        List<RouteParentRef> out = new ArrayList<>();
        for (JsonObject ref : JsonFields.objects(spec, "parentRefs")) {
            String group = JsonFields.optionalString(ref, "group").orElse(GatewayApiKinds.GROUP);
            String kind = JsonFields.optionalString(ref, "kind").orElse(GatewayApiKinds.GATEWAY);
            String name = JsonFields.string(ref, "name");
            String namespace = JsonFields.optionalString(ref, "namespace").orElse(route.namespace());
            ParentKey key = new ParentKey(kind, namespace, name);
            boolean service = group.isEmpty() && kind.equals(PolicyTarget.SERVICE);
            boolean serviceEntry = group.equals(Schemas.NETWORKING) && kind.equals(PolicyTarget.SERVICE_ENTRY);
            boolean meshParent = service || serviceEntry;
            boolean listenerParent = group.equals(GatewayApiKinds.GROUP)
                    && (kind.equals(GatewayApiKinds.GATEWAY) || kind.equals(GatewayApiKinds.LISTENER_SET));
            if (!meshParent && !listenerParent) {
                continue;
            }
            String serviceHost = name + "." + namespace + ".svc." + inputs.settings().domainSuffix();
            Optional<PolicyTarget> entry = serviceEntry ? inputs.services().serviceEntry(namespace, name) : Optional.empty();
            Optional<Map<String, String>> parentLabels = service
                    ? inputs.services().service(serviceHost, namespace).map(ServiceView::labels)
                    : entry.map(PolicyTarget::labels);
            if (meshParent && waypointManagedByAnotherController(namespace, parentLabels)) {
                continue;
            }
            List<String> meshHosts = service ? List.of(serviceHost) : entry.map(PolicyTarget::hosts).orElse(List.of());
            List<ParentListener> listeners = meshParent ? meshListeners() : parents.of(key);
            for (ParentListener listener : listeners) {
                Set<String> banned = new HashSet<>();
                for (ParentListener other : listeners) {
                    if (other != listener && other.port() == listener.port() && other.protocol().equals(listener.protocol())) {
                        banned.add(other.originalHostname());
                    }
                }
                banned.remove(listener.originalHostname());
                ParentError denied = meshParent ? meshDenied(kind, name, parentLabels.isPresent(), route.kind(), listener)
                        : listenerDenied(route, ref, listener, hostnames);
                out.add(new RouteParentRef(listener.internalName(), listener.originalHostname(), denied, ref, banned,
                        key, listener.sectionName(), meshHosts));
            }
        }
        out.sort(Comparator.comparing(p -> parentRefString(p.original(), route.namespace())));
        return out;
    }

    private List<ParentListener> meshListeners() {
        List<ParentListener> published = parents.of(ParentKey.MESH);
        return published.isEmpty() ? List.of(MESH_LISTENER) : published;
    }

    /** istiod's referenceAllowed for a Service or ServiceEntry parent: it must exist. */
    private static ParentError meshDenied(String parentKind, String name, boolean exists, String routeKind,
                                          ParentListener mesh) {
        if (!exists) {
            String what = parentKind.equals(PolicyTarget.SERVICE) ? "parent service" : "parent service entry";
            return new ParentError(ParentError.NO_MATCHING_PARENT, what + ": \"" + name + "\" not found");
        }
        return kindDenied(routeKind, mesh);
    }

    /** istiod's referenceAllowed for a Gateway or ListenerSet listener; the checks in its order. */
    private ParentError listenerDenied(GatewayApiObject route, JsonObject ref, ParentListener listener,
                                       List<String> routeHostnames) {
        Optional<Integer> port = JsonFields.optionalInteger(ref, "port");
        if (port.isPresent() && port.get() != 0 && port.get() != listener.port()) {
            return new ParentError(ParentError.NO_MATCHING_PARENT, "port " + port.get() + " not found");
        }
        String section = JsonFields.string(ref, "sectionName");
        if (!section.isEmpty() && !section.equals(listener.sectionName())) {
            return new ParentError(ParentError.NO_MATCHING_PARENT, "sectionName \"" + section + "\" not found");
        }
        List<String> hostnames = routeHostnames.isEmpty() ? List.of("*") : routeHostnames;
        if (!listener.hostnames().isEmpty()) {
            boolean matched = false;
            boolean hostMatched = false;
            outer:
            for (String routeHost : hostnames) {
                for (String parentHost : listener.hostnames()) {
                    int slash = parentHost.indexOf('/');
                    String parentNamespace = slash < 0 ? "*" : parentHost.substring(0, slash);
                    String parentHostname = slash < 0 ? parentHost : parentHost.substring(slash + 1);
                    boolean hostMatch = HostNames.matches(parentHostname, routeHost);
                    hostMatched |= hostMatch;
                    if (hostMatch && (parentNamespace.equals("*") || parentNamespace.equals(route.namespace()))) {
                        matched = true;
                        break outer;
                    }
                }
            }
            if (!matched) {
                return hostMatched
                        ? new ParentError(ParentError.NOT_ALLOWED_BY_LISTENERS, "hostnames matched parent hostname \""
                        + listener.originalHostname() + "\", but namespace \"" + route.namespace()
                        + "\" is not allowed by the parent")
                        : new ParentError(ParentError.NO_MATCHING_LISTENER_HOSTNAME,
                        "no hostnames matched parent hostname \"" + listener.originalHostname() + "\"");
            }
        }
        return kindDenied(route.kind(), listener);
    }

    private static ParentError kindDenied(String routeKind, ParentListener listener) {
        if (listener.allowedKinds().contains(GatewayApiKinds.GROUP + "/" + routeKind)) {
            return null;
        }
        // istiod prints the route's group/version/kind; it reads every route kind at v1 (86c9f01)
        return new ParentError(ParentError.NOT_ALLOWED_BY_LISTENERS,
                "kind " + GatewayApiKinds.GROUP + "/v1/" + routeKind + " is not allowed");
    }

    /**
     * Whether the Service or ServiceEntry (or else its namespace) names, with
     * {@code istio.io/use-waypoint}, a waypoint Gateway of a class another controller runs: then
     * the route is that controller's (istiod's waypointManagedByAnotherController).
     *
     * @param parentLabels the parent's labels; empty when it does not exist
     */
    private boolean waypointManagedByAnotherController(String namespace, Optional<Map<String, String>> parentLabels) {
        if (parentLabels.isEmpty()) {
            return false;
        }
        Map<String, String> labels = parentLabels.get();
        if (!labels.containsKey(USE_WAYPOINT)) {
            labels = inputs.namespaceLabels().getOrDefault(namespace, Map.of());
        }
        String waypoint = labels.getOrDefault(USE_WAYPOINT, "");
        if (waypoint.isEmpty() || waypoint.equalsIgnoreCase("none")) {
            return false;
        }
        String waypointNamespace = labels.getOrDefault(USE_WAYPOINT_NAMESPACE, "");
        String gatewayNamespace = waypointNamespace.isEmpty() ? namespace : waypointNamespace;
        Optional<String> className = inputs.ofKind(GatewayApiKinds.GATEWAY).stream()
                .filter(g -> g.namespace().equals(gatewayNamespace) && g.name().equals(waypoint))
                .map(g -> JsonFields.string(g.spec(), "gatewayClassName")).findFirst();
        if (className.isEmpty()) {
            return false;
        }
        Optional<String> controller = inputs.ofKind(GatewayApiKinds.GATEWAY_CLASS).stream()
                .filter(c -> c.name().equals(className.get()))
                .map(c -> JsonFields.string(c.spec(), "controllerName")).findFirst();
        return controller.isPresent() && !controller.get().equals(GatewayApiKinds.MESH_CONTROLLER)
                && !controller.get().equals(inputs.settings().controllerName());
    }

    /**
     * istiod's parentRefString: {@code group/kind/name/section/port.namespace} with the defaults
     * filled in; the order of a route's parents and the identity of a status entry.
     */
    static String parentRefString(JsonObject ref, String routeNamespace) {
        return JsonFields.optionalString(ref, "group").orElse(GatewayApiKinds.GROUP) + "/"
                + JsonFields.optionalString(ref, "kind").orElse(GatewayApiKinds.GATEWAY) + "/"
                + JsonFields.string(ref, "name") + "/"
                + JsonFields.string(ref, "sectionName") + "/"
                + JsonFields.optionalInteger(ref, "port").orElse(0) + "."
                + JsonFields.optionalString(ref, "namespace").orElse(routeNamespace);
    }
}
