package io.meshpilot.networking.envoyfilter;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Message;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.MergedEnvoyFilters;
import io.meshpilot.networking.envoy.MergedGateway;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Applies the EnvoyFilter patches of one proxy to generated resources (istiod's envoyfilter
 * package): the hook the CDS, LDS and RDS generators call on what they built. Resources come
 * and go packed, as the generators hold them; with no patch of the type nothing is unpacked.
 */
public final class EnvoyFilterPatches {
    private static final PatchFailures FAILURES = new PatchFailures();
    private static final RoutePatcher ROUTES = new RoutePatcher(FAILURES);
    private static final ListenerPatcher LISTENERS = new ListenerPatcher(FAILURES, ROUTES);
    private static final ClusterPatcher CLUSTERS = new ClusterPatcher(FAILURES);

    private EnvoyFilterPatches() {
    }

    /** The clusters after the MERGE/REMOVE patches of {@code context}, then (unless {@code skipAdds}) the ADD ones. */
    public static List<Any> clusters(PatchContext context, MergedEnvoyFilters efw, List<Any> clusters,
                                     boolean skipAdds) {
        return clusters(context, efw, clusters, Map.of(), skipAdds);
    }

    /** As {@link #clusters(PatchContext, MergedEnvoyFilters, List, boolean)}; {@code inboundHosts}: the services behind each inbound cluster. */
    public static List<Any> clusters(PatchContext context, MergedEnvoyFilters efw, List<Any> clusters,
                                     Map<String, List<String>> inboundHosts, boolean skipAdds) {
        if (!efw.has(ApplyTo.CLUSTER)) {
            return clusters;
        }
        List<Any> out = new ArrayList<>(clusters.size());
        for (Any a : clusters) {
            Cluster c = unpack(a, Cluster.class);
            CLUSTERS.patch(context, efw, c, inboundHosts.getOrDefault(c.getName(), List.of()))
                    .ifPresent(p -> out.add(p == c ? a : Any.pack(p)));
        }
        if (!skipAdds) {
            for (Cluster c : CLUSTERS.inserted(context, efw)) {
                out.add(Any.pack(c));
            }
        }
        return out;
    }

    /** The listeners patched in {@code context}; {@code skipAdds}: the ADD listeners go elsewhere. */
    public static List<Any> listeners(PatchContext context, MergedEnvoyFilters efw, List<Any> listeners,
                                      boolean skipAdds) {
        if (!efw.has(ApplyTo.LISTENER, ApplyTo.LISTENER_FILTER, ApplyTo.FILTER_CHAIN, ApplyTo.NETWORK_FILTER,
                ApplyTo.HTTP_FILTER, ApplyTo.ROUTE_CONFIGURATION, ApplyTo.VIRTUAL_HOST, ApplyTo.HTTP_ROUTE)) {
            return listeners;
        }
        List<Listener> in = listeners.stream().map(a -> unpack(a, Listener.class)).toList();
        return LISTENERS.patch(context, efw, in, skipAdds).stream().map(Any::pack).toList();
    }

    /** A sidecar's route configuration patched in {@code context}. */
    public static Any routeConfiguration(PatchContext context, MergedEnvoyFilters efw, Any rc) {
        return routeConfiguration(context, efw, rc, Map.of());
    }

    /**
     * A route configuration patched in {@code context}; {@code portMap}: a gateway's listener
     * ports to the server ports they serve ({@link #gatewayPortMap}).
     */
    public static Any routeConfiguration(PatchContext context, MergedEnvoyFilters efw, Any rc,
                                         Map<Integer, Set<Integer>> portMap) {
        if (rc == null || !efw.has(ApplyTo.ROUTE_CONFIGURATION, ApplyTo.VIRTUAL_HOST, ApplyTo.HTTP_ROUTE)) {
            return rc;
        }
        return Any.pack(ROUTES.patch(context, efw, unpack(rc, RouteConfiguration.class), portMap));
    }

    /** istiod's GatewayPortMap: each listener port of a merged gateway to the server ports it serves. */
    public static Map<Integer, Set<Integer>> gatewayPortMap(
            MergedGateway gateway) {
        Map<Integer, Set<Integer>> out = new HashMap<>();
        for (var port : gateway.ports()) {
            for (var server : port.servers()) {
                out.computeIfAbsent(port.number(), n -> new TreeSet<>()).add(server.server().getPort().getNumber());
            }
        }
        return out;
    }

    /**
     * The extension configs that the EXTENSION_CONFIG patches of {@code efw} insert under the
     * names in {@code names}, for ECDS (istiod's InsertedExtensionConfigurations).
     */
    public static List<TypedExtensionConfig> extensionConfigs(
            MergedEnvoyFilters efw, Set<String> names) {
        return efw.has(ApplyTo.EXTENSION_CONFIG) ? ExtensionConfigPatcher.inserted(efw, names) : List.of();
    }

    /** Typed forms, for callers that hold messages. */
    public static List<Listener> listenerMessages(PatchContext context, MergedEnvoyFilters efw, List<Listener> in,
                                                  boolean skipAdds) {
        return LISTENERS.patch(context, efw, in, skipAdds);
    }

    public static RouteConfiguration routeMessage(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc) {
        return ROUTES.patch(context, efw, rc);
    }

    public static RouteConfiguration routeMessage(PatchContext context, MergedEnvoyFilters efw, RouteConfiguration rc,
                                                  Map<Integer, Set<Integer>> portMap) {
        return ROUTES.patch(context, efw, rc, portMap);
    }

    public static List<Cluster> clusterMessages(PatchContext context, MergedEnvoyFilters efw, List<Cluster> in) {
        return clusterMessages(context, efw, in, Map.of());
    }

    public static List<Cluster> clusterMessages(PatchContext context, MergedEnvoyFilters efw, List<Cluster> in,
                                                Map<String, List<String>> inboundHosts) {
        List<Cluster> out = new ArrayList<>();
        for (Cluster c : in) {
            CLUSTERS.patch(context, efw, c, inboundHosts.getOrDefault(c.getName(), List.of())).ifPresent(out::add);
        }
        out.addAll(CLUSTERS.inserted(context, efw));
        return out;
    }

    private static <T extends Message> T unpack(Any a, Class<T> type) {
        try {
            return a.unpack(type);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("generated resource is not a " + type.getSimpleName(), e);
        }
    }
}
