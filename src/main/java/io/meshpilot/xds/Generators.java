package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.networking.ClusterBuilder;
import io.meshpilot.networking.EndpointBuilder;
import io.meshpilot.networking.grpcgen.GrpcListenerBuilder;
import io.meshpilot.networking.grpcgen.GrpcRouteBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;

/**
 * Which generator serves which type for which proxy (istiod picks by the GENERATOR metadata,
 * then the proxy type): proxyless gRPC clients get the gRPC generator's LDS/RDS and the
 * shared CDS/EDS; Envoy sidecars get CDS and EDS here, their LDS and RDS come with the Envoy
 * config issue (answered empty until then).
 */
final class Generators {
    private Generators() {
    }

    /** Shared across proxies; set by the DiscoveryServer at start. */
    static volatile XdsCache cache = new XdsCache(false);

    /** istio.io/debug/syncz over the connections of the running DiscoveryServer; set at start. */
    static volatile Generator syncz = (proxy, push, names, wildcard) -> List.of();

    static final Generator EDS = (proxy, push, names, wildcard) -> {
        List<Any> out = new ArrayList<>();
        for (String n : new TreeSet<>(names)) {
            Any cla = cache.endpoints(n, () -> EndpointBuilder.build(n, push).map(Any::pack).orElse(null));
            if (cla != null) {
                out.add(cla);
            }
        }
        return out;
    };

    static final Generator CDS = (proxy, push, names, wildcard) -> {
        List<Any> out = new ArrayList<>();
        if (wildcard && !proxy.proxyless()) {
            return cache.clusters(push.version(), () -> ClusterBuilder.all(push).stream().map(Any::pack).toList());
        } else {
            for (String n : new TreeSet<>(names)) {
                ClusterBuilder.build(n, push).ifPresent(c -> out.add(Any.pack(c)));
            }
        }
        return out;
    };

    static final Generator GRPC_LDS = (proxy, push, names, wildcard) -> {
        List<Any> out = new ArrayList<>();
        for (String n : new TreeSet<>(names)) {
            var l = GrpcListenerBuilder.build(n, proxy.namespace(), push);
            if (l != null) {
                out.add(Any.pack(l));
            }
        }
        return out;
    };

    static final Generator GRPC_RDS = (proxy, push, names, wildcard) -> {
        List<Any> out = new ArrayList<>();
        for (String n : new TreeSet<>(names)) {
            var r = GrpcRouteBuilder.build(n, proxy.namespace(), push);
            if (r != null) {
                out.add(Any.pack(r));
            }
        }
        return out;
    };

    static final Generator EMPTY = (proxy, push, names, wildcard) -> List.of();

    /** The generator for a type and proxy, or null for a type nobody serves. */
    static Generator forType(String typeUrl, Proxy proxy) {
        if (typeUrl.equals(TypeUrls.DEBUG_SYNCZ)) {
            return syncz;
        }
        return (proxy.proxyless() ? PROXYLESS : ENVOY).get(typeUrl);
    }

    // looked up on every push of every connection: built once
    private static final Map<String, Generator> PROXYLESS = Map.of(TypeUrls.LISTENER, GRPC_LDS, TypeUrls.ROUTE, GRPC_RDS,
            TypeUrls.CLUSTER, CDS, TypeUrls.ENDPOINT, EDS);
    private static final Map<String, Generator> ENVOY = Map.of(TypeUrls.LISTENER, EMPTY, TypeUrls.ROUTE, EMPTY,
            TypeUrls.CLUSTER, CDS, TypeUrls.ENDPOINT, EDS);
}
