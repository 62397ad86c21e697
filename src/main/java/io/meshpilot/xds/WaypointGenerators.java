package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.AmbientIndexes;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.WaypointWorkloads;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.WaypointEndpoints;
import io.meshpilot.networking.envoy.WaypointClusterBuilder;
import io.meshpilot.networking.envoy.WaypointListenerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * What a waypoint proxy gets (istiod's generators for node type waypoint): LDS and CDS of
 * listener_waypoint.go and cluster_waypoint.go for the services that use the waypoint (LDS also for the workloads that do), EDS of
 * its {@code inbound-vip} clusters (HBONE to captured pods) and of the outbound clusters its
 * routes name, and no RDS: every route is inline in {@code main_internal}. Built per waypoint
 * (there are few), not shared.
 */
final class WaypointGenerators {
    private WaypointGenerators() {
    }

    /** LDS: the listeners for the services and the workloads ({@code indexes}, the ambient index) using the waypoint. */
    static Generator lds(Supplier<AmbientIndexes> indexes) {
        return (proxy, push, names, wildcard) -> WaypointListenerBuilder.listeners(proxy, push,
                        WaypointWorkloads.addresses(proxy, push.domainSuffix(), indexes.get()))
                .stream().filter(l -> wildcard || names.contains(l.getName())).map(Any::pack).toList();
    }

    static final Generator CDS = (proxy, push, names, wildcard) -> WaypointClusterBuilder.clusters(proxy, push)
            .stream().filter(c -> wildcard || names.contains(c.getName())).map(Any::pack).toList();

    static final Generator RDS = (proxy, push, names, wildcard) -> List.of();

    /** EDS: the waypoint's own clusters here, outbound ones as for every proxy ({@code outbound}). */
    static Generator eds(Generator outbound) {
        return (Proxy proxy, PushContext push, Set<String> names, boolean wildcard) -> {
            List<Any> out = new ArrayList<>();
            List<String> others = new ArrayList<>();
            for (String n : Generators.ordered(names)) {
                if (ClusterNames.parseInboundVip(n) == null) {
                    others.add(n);
                    continue;
                }
                WaypointEndpoints.build(n, push, push.scope(proxy)).ifPresent(cla -> out.add(Any.pack(cla)));
            }
            if (!others.isEmpty()) {
                out.addAll(outbound.generate(proxy, push, Set.copyOf(others), false));
            }
            return out;
        };
    }

    /** The generators by type URL, with the debug types every proxy has. */
    static Map<String, Generator> byType(Generator outboundEds, Generator syncz, Generator configDump,
                                         Supplier<AmbientIndexes> indexes) {
        return Map.of(TypeUrls.LISTENER, lds(indexes), TypeUrls.CLUSTER, CDS, TypeUrls.ENDPOINT, eds(outboundEds),
                TypeUrls.ROUTE, RDS, TypeUrls.DEBUG_SYNCZ, syncz, TypeUrls.DEBUG_CONFIG_DUMP, configDump);
    }
}
