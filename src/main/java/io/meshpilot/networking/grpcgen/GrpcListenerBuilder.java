package io.meshpilot.networking.grpcgen;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.listener.v3.ApiListener;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.Rds;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;

/**
 * LDS for proxyless gRPC: one {@code api_listener} per requested {@code host:port}, an
 * HttpConnectionManager that takes its routes over ADS (route configuration of the same name)
 * with the fault filter (VirtualService faults) and the router filter last, as gRPC requires.
 * Names that are no known service port get no listener (the client reports "not found").
 */
public final class GrpcListenerBuilder {
    static final String FAULT_FILTER = "envoy.filters.http.fault";
    static final String ROUTER_FILTER = "envoy.filters.http.router";

    private GrpcListenerBuilder() {
    }

    public static Listener build(String name, ProxyScope scope, PushContext push) {
        HostPort hp = HostPort.parse(name, scope.namespace(), push.domainSuffix());
        if (hp == null || push.service(hp.host(), scope).flatMap(s -> s.port(hp.port())).isEmpty()) {
            return null;
        }
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setRds(Rds.newBuilder().setRouteConfigName(name).setConfigSource(ads()))
                .addHttpFilters(HttpFilter.newBuilder().setName(FAULT_FILTER).setTypedConfig(Any.pack(
                        HTTPFault.getDefaultInstance())))
                .addHttpFilters(HttpFilter.newBuilder().setName(ROUTER_FILTER).setTypedConfig(Any.pack(
                        Router.getDefaultInstance())))
                .build();
        return Listener.newBuilder().setName(name)
                .setApiListener(ApiListener.newBuilder().setApiListener(Any.pack(hcm)))
                .build();
    }

    static ConfigSource ads() {
        return ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                .setResourceApiVersion(ApiVersion.V3).build();
    }
}
