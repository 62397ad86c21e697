package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.grpcgen.GrpcRouteBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Proxyless gRPC RDS (istiod's grpcgen): one route configuration per host:port asked for. */
final class GrpcRdsGenerator implements Generator {
    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            var r = GrpcRouteBuilder.build(n, scope, push);
            if (r != null) {
                out.add(Any.pack(r));
            }
        }
        return out;
    }
}
