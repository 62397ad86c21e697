package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.grpcgen.GrpcInboundListenerBuilder;
import io.meshpilot.networking.grpcgen.GrpcListenerBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Proxyless gRPC LDS (istiod's grpcgen): client listeners by host:port, server listeners by their inbound prefix. */
final class GrpcLdsGenerator implements Generator {
    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        ProxyScope scope = push.scope(proxy);
        List<Any> out = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            var l = n.startsWith(GrpcInboundListenerBuilder.PREFIX) ? GrpcInboundListenerBuilder.build(n, proxy, push)
                    : GrpcListenerBuilder.build(n, scope, push);
            if (l != null) {
                out.add(Any.pack(l));
            }
        }
        return out;
    }
}
