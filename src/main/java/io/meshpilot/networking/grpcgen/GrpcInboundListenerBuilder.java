package io.meshpilot.networking.grpcgen;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.Address;
import io.envoyproxy.envoy.config.core.v3.SocketAddress;
import io.envoyproxy.envoy.config.listener.v3.Filter;
import io.envoyproxy.envoy.config.listener.v3.FilterChain;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.NonForwardingAction;
import io.envoyproxy.envoy.config.route.v3.Route;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.route.v3.RouteMatch;
import io.envoyproxy.envoy.config.route.v3.VirtualHost;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.authz.AuthorizationFilters;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * LDS for xDS-enabled gRPC servers (gRFC A36): the server asks for
 * {@code xds.istio.io/grpc/lds/inbound/<host>:<port>} (the listener name template Istio's
 * agent writes into the bootstrap) and starts serving on that port once it has the listener.
 * As istiod, the port must be one of the proxy's own service endpoints; the listener has one
 * plaintext filter chain whose HttpConnectionManager carries an inline route that accepts
 * every call (a non-forwarding action: the server handles it), the AuthorizationPolicies of
 * the workload as RBAC filters (DENY, then ALLOW: gRPC knows no other action) and the router
 * filter last. Mutual TLS comes with the CA.
 */
public final class GrpcInboundListenerBuilder {
    private static final System.Logger LOG = System.getLogger(GrpcInboundListenerBuilder.class.getName());
    /** The prefix of inbound listener names (Istio's grpcxds.ServerListenerNamePrefix). */
    public static final String PREFIX = "xds.istio.io/grpc/lds/inbound/";

    private GrpcInboundListenerBuilder() {
    }

    /** The inbound listener of {@code name} for {@code proxy}, or null when it serves no such port. */
    public static Listener build(String name, Proxy proxy, PushContext push) {
        String address = name.substring(PREFIX.length());
        int colon = address.lastIndexOf(':');
        int port;
        try {
            port = Integer.parseInt(address.substring(colon + 1));
        } catch (NumberFormatException | StringIndexOutOfBoundsException e) {
            LOG.log(Level.WARNING, "cannot parse the gRPC server listener name " + name + " proxy=" + proxy.id());
            return null;
        }
        String host = address.substring(0, Math.max(colon, 0));
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        if (!servesPort(proxy, push, port)) {
            LOG.log(Level.WARNING, "no service endpoint of proxy=" + proxy.id() + " on port " + port
                    + ": no inbound listener " + name);
            return null;
        }
        RouteConfiguration routes = RouteConfiguration.newBuilder().setName("inbound")
                .addVirtualHosts(VirtualHost.newBuilder().setName("inbound").addDomains("*")
                        .addRoutes(Route.newBuilder().setMatch(RouteMatch.newBuilder().setPrefix("/"))
                                .setNonForwardingAction(NonForwardingAction.getDefaultInstance())))
                .build();
        HttpConnectionManager hcm = HttpConnectionManager.newBuilder()
                .setStatPrefix("inbound_" + port)
                .setRouteConfig(routes)
                .addAllHttpFilters(securityHttpFilters(proxy, push))
                .addHttpFilters(HttpFilter.newBuilder().setName(GrpcListenerBuilder.ROUTER_FILTER)
                        .setTypedConfig(Any.pack(Router.getDefaultInstance())))
                .build();
        return Listener.newBuilder().setName(name)
                .setAddress(Address.newBuilder().setSocketAddress(SocketAddress.newBuilder()
                        .setAddress(host).setPortValue(port)))
                .addFilterChains(FilterChain.newBuilder().setName("inbound-plaintext")
                        .addFilters(Filter.newBuilder().setName("inbound-hcm-plaintext").setTypedConfig(Any.pack(hcm))))
                .build();
    }

    /**
     * The security HTTP filters of a gRPC server's connection manager, before the router:
     * authentication would come first, then the RBAC filters (istiod's grpcgen buildRBAC).
     */
    private static List<HttpFilter> securityHttpFilters(Proxy proxy, PushContext push) {
        return AuthorizationFilters.forProxy(proxy, push).grpcServer();
    }

    /** Whether one of the proxy's IPs is an endpoint on {@code port} of a service (istiod's service instances). */
    private static boolean servesPort(Proxy proxy, PushContext push, int port) {
        for (Service s : push.services().values()) {
            var shards = push.endpoints().shards(s.hostname(), s.namespace());
            if (shards == null) {
                continue;
            }
            for (IstioEndpoint e : shards.all()) {
                if (e.endpointPort() == port && proxy.ips().contains(e.address())) {
                    return true;
                }
            }
        }
        return false;
    }
}
