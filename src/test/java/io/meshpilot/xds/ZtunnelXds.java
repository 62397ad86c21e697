package io.meshpilot.xds;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.meshpilot.model.AmbientIndexes;
import io.meshpilot.model.Proxy;
import java.util.Map;
import java.util.Set;

/**
 * ztunnel's Address type as the server's generator answers a wildcard ztunnel, without gRPC:
 * what a push worker builds for one connection ({@link AddressGenerator} and its response), for
 * benchmarks.
 */
public final class ZtunnelXds {
    private final AddressGenerator generator;

    public ZtunnelXds(AmbientIndexes index) {
        this.generator = new AddressGenerator(() -> index);
    }

    /** A ztunnel proxy on {@code node} as the server parses its node. */
    public static Proxy ztunnel(int i, String node) {
        return Proxy.fromNode(Node.newBuilder()
                .setId("ztunnel~10.0.0." + i + "~ztunnel-" + i + ".istio-system~istio-system.svc.cluster.local")
                .setMetadata(Struct.newBuilder().putFields("NODE_NAME",
                        Value.newBuilder().setStringValue(node).build()))
                .build());
    }

    /** The push a wildcard ztunnel gets for a push request naming {@code updated}. */
    public DeltaDiscoveryResponse push(Proxy ztunnel, Set<String> updated, long version) {
        return generator.generateDelta(ztunnel, true, Set.of(), null, updated).response(version);
    }

    /** The first answer of a wildcard ztunnel: every address. */
    public DeltaDiscoveryResponse initial(Proxy ztunnel, long version) {
        return generator.generateDelta(ztunnel, true, Set.of(), new AddressGenerator.Ask(Set.of(), Map.of()),
                Set.of()).response(version);
    }
}
