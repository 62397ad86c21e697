package io.meshpilot.networking.envoyfilter;

import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.RouteConfigurationMatch;
import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;
import io.meshpilot.model.MergedEnvoyFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * istiod's rc_patch: ROUTE_CONFIGURATION (MERGE), VIRTUAL_HOST (MERGE, REPLACE, REMOVE, ADD)
 * and HTTP_ROUTE (MERGE, REMOVE, ADD, INSERT_BEFORE/AFTER/FIRST) patches of one route
 * configuration.
 */
final class RoutePatcher {
    private final PatchFailures failures;

    RoutePatcher(PatchFailures failures) {
        this.failures = failures;
    }

    RouteConfiguration patch(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc) {
        return patch(context, efw, rc, Map.of());
    }

    /**
     * @param portMap a gateway's listener ports to the server ports they serve (istiod's
     *                GatewayPortMap): a route {@code portNumber} match names a server port
     */
    RouteConfiguration patch(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc,
                             Map<Integer, Set<Integer>> portMap) {
        for (ConfigPatch rp : efw.patches(ApplyTo.ROUTE_CONFIGURATION)) {
            if (rp.operation() == Operation.MERGE && PatchMatch.context(context, rp)
                    && routeConfigurationMatch(context, rc, rp, portMap)) {
                rc = ProtoMerge.merge(rc, rp.value());
            }
        }
        if (!efw.has(ApplyTo.VIRTUAL_HOST, ApplyTo.HTTP_ROUTE)) {
            return rc;
        }
        List<VirtualHost> hosts = new ArrayList<>();
        for (VirtualHost vh : rc.getVirtualHostsList()) {
            VirtualHost patched = patchVirtualHost(context, efw, rc, vh, portMap);
            if (patched != null) {
                hosts.add(patched);
            }
        }
        for (ConfigPatch rp : efw.patches(ApplyTo.VIRTUAL_HOST)) {
            if (rp.operation() == Operation.ADD && PatchMatch.context(context, rp)
                    && routeConfigurationMatch(context, rc, rp, portMap)) {
                hosts.add((VirtualHost) rp.value());
            }
        }
        return rc.toBuilder().clearVirtualHosts().addAllVirtualHosts(hosts).build();
    }

    /** The host after its patches and its routes' patches; null when removed. */
    private VirtualHost patchVirtualHost(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc,
                                         VirtualHost vh, Map<Integer, Set<Integer>> portMap) {
        for (ConfigPatch rp : efw.patches(ApplyTo.VIRTUAL_HOST)) {
            if (!PatchMatch.context(context, rp) || !routeConfigurationMatch(context, rc, rp, portMap)
                    || !virtualHostMatch(vh, rp)) {
                continue;
            }
            switch (rp.operation()) {
                case REMOVE -> {
                    return null;
                }
                case MERGE -> vh = ProtoMerge.merge(vh, rp.value());
                case REPLACE -> vh = (VirtualHost) rp.value();
                default -> { }
            }
        }
        return efw.has(ApplyTo.HTTP_ROUTE) ? patchRoutes(context, efw, rc, vh, portMap) : vh;
    }

    private VirtualHost patchRoutes(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc,
                                    VirtualHost vh, Map<Integer, Set<Integer>> portMap) {
        List<Route> routes = new ArrayList<>();
        for (Route r : vh.getRoutesList()) {
            Route patched = patchRoute(context, efw, rc, vh, r, portMap);
            if (patched != null) {
                routes.add(patched);
            }
        }
        for (ConfigPatch rp : efw.patches(ApplyTo.HTTP_ROUTE)) {
            if (!PatchMatch.context(context, rp) || !routeConfigurationMatch(context, rc, rp, portMap)
                    || !virtualHostMatch(vh, rp)) {
                continue;
            }
            Route value = (Route) rp.value();
            boolean hasMatch = hasRouteMatch(rp);
            switch (rp.operation()) {
                case ADD -> routes.add(value);
                case INSERT_AFTER -> {
                    if (!hasMatch) {
                        routes.add(value);
                    } else {
                        ListOps.insertAfter(routes, r -> routeMatch(r, rp), value);
                    }
                }
                case INSERT_BEFORE -> {
                    if (!hasMatch) {
                        routes.addFirst(value);
                    } else {
                        ListOps.insertBefore(routes, r -> routeMatch(r, rp), value);
                    }
                }
                case INSERT_FIRST -> {
                    // istiod: first in the host, when some route matches (or no route is named)
                    if (!hasMatch || routes.stream().anyMatch(r -> routeMatch(r, rp))) {
                        routes.addFirst(value);
                    }
                }
                default -> { }
            }
        }
        return vh.toBuilder().clearRoutes().addAllRoutes(routes).build();
    }

    private Route patchRoute(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc, VirtualHost vh,
                             Route r, Map<Integer, Set<Integer>> portMap) {
        for (ConfigPatch rp : efw.patches(ApplyTo.HTTP_ROUTE)) {
            if (!PatchMatch.context(context, rp) || !routeConfigurationMatch(context, rc, rp, portMap)
                    || !virtualHostMatch(vh, rp) || !routeMatch(r, rp)) {
                continue;
            }
            if (rp.operation() == Operation.REMOVE) {
                return null;
            }
            if (rp.operation() == Operation.MERGE) {
                try {
                    r = ProtoMerge.merge(r, rp.value());
                } catch (IllegalArgumentException e) {
                    failures.failed(rp, "route " + r.getName() + " of " + rc.getName(), e);
                }
            }
        }
        return r;
    }

    /**
     * istiod's routeConfigurationMatch: by name and, for sidecars, the port the name is (or an
     * inbound cluster name's port); for gateways by name, port name, gateway and port number
     * of the RDS name ({@code http.<port>}, {@code https.<port>.<portName>.<gateway>.<namespace>}).
     */
    static boolean routeConfigurationMatch(PatchContext context, RouteConfiguration rc, ConfigPatch rp,
                                           Map<Integer, Set<Integer>> portMap) {
        if (!rp.match().hasRouteConfiguration()) {
            return true;
        }
        RouteConfigurationMatch m = rp.match().getRouteConfiguration();
        if (!m.getName().isEmpty() && !m.getName().equals(rc.getName())) {
            return false;
        }
        if (context != PatchContext.GATEWAY) {
            return m.getPortNumber() == 0 || m.getPortNumber() == sidecarRoutePort(rc.getName());
        }
        String[] parts = rc.getName().split("\\.", 5);
        int port = parts.length >= 2 ? parseInt(parts[1]) : 0;
        String portName = parts.length == 5 ? parts[2] : "";
        String gateway = parts.length == 5 ? parts[4] + "/" + parts[3] : "";
        if (!m.getPortName().isEmpty() && !m.getPortName().equals(portName)) {
            return false;
        }
        if (!m.getGateway().isEmpty() && !m.getGateway().equals(gateway)) {
            return false;
        }
        if (m.getPortNumber() == 0) {
            return true;
        }
        // istiod's anyPortMatches: a listener port the gateway maps matches its server ports only
        Set<Integer> servicePorts = portMap.get(port);
        return servicePorts != null ? servicePorts.contains(m.getPortNumber()) : m.getPortNumber() == port;
    }

    private static int sidecarRoutePort(String name) {
        if (name.startsWith("inbound")) {
            String[] parts = name.split("\\|", -1);
            return parts.length == 4 ? parseInt(parts[1]) : 0;
        }
        return parseInt(name);
    }

    private static int parseInt(String s) {
        try {
            return Integer.parseInt(s);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** istiod's virtualHostMatch: the host's name and one of its domains (exactly), each when the patch names one. */
    static boolean virtualHostMatch(VirtualHost vh, ConfigPatch rp) {
        if (!rp.match().hasRouteConfiguration() || !rp.match().getRouteConfiguration().hasVhost()) {
            return true;
        }
        RouteConfigurationMatch.VirtualHostMatch match = rp.match().getRouteConfiguration().getVhost();
        return (match.getName().isEmpty() || match.getName().equals(vh.getName()))
                && (match.getDomainName().isEmpty() || vh.getDomainsList().contains(match.getDomainName()));
    }

    private static boolean hasRouteMatch(ConfigPatch rp) {
        return rp.match().hasRouteConfiguration() && rp.match().getRouteConfiguration().hasVhost()
                && rp.match().getRouteConfiguration().getVhost().hasRoute();
    }

    static boolean routeMatch(Route r, ConfigPatch rp) {
        if (!hasRouteMatch(rp)) {
            return true;
        }
        RouteConfigurationMatch.RouteMatch m = rp.match().getRouteConfiguration().getVhost().getRoute();
        if (!m.getName().isEmpty() && !m.getName().equals(r.getName())) {
            return false;
        }
        return switch (m.getAction()) {
            case ROUTE -> r.hasRoute();
            case REDIRECT -> r.hasRedirect();
            case DIRECT_RESPONSE -> r.hasDirectResponse();
            default -> true;
        };
    }
}
