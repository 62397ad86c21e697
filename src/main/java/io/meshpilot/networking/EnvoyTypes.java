package io.meshpilot.networking;

import com.google.protobuf.TypeRegistry;

/**
 * Every message type our Envoy resources carry in an {@code Any} (resources and their typed
 * configs), for printing them as JSON ({@code /debug/config_dump}): a type missing here
 * prints as nothing useful, so a new typed config joins this list.
 */
public final class EnvoyTypes {
    public static final TypeRegistry REGISTRY = TypeRegistry.newBuilder()
            .add(io.envoyproxy.envoy.config.listener.v3.Listener.getDescriptor())
            .add(io.envoyproxy.envoy.config.route.v3.RouteConfiguration.getDescriptor())
            .add(io.envoyproxy.envoy.config.cluster.v3.Cluster.getDescriptor())
            .add(io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.router.v3.Router.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.cors.v3.CorsPolicy.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.cors.v3.Cors.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.listener.original_dst.v3.OriginalDst.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.listener.http_inspector.v3.HttpInspector.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.rbac.v3.RBAC.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.ext_authz.v3.ExtAuthz.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig.getDescriptor())
            // the filters EnvoyFilters most often insert (Istio's samples): Lua and local rate limiting
            .add(io.envoyproxy.envoy.extensions.filters.http.lua.v3.Lua.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit.getDescriptor())
            // Telemetry: access loggers, their CEL filter and formatter, tracers
            .add(io.envoyproxy.envoy.extensions.access_loggers.file.v3.FileAccessLog.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery.getDescriptor())
            .add(io.envoyproxy.envoy.config.trace.v3.ZipkinConfig.getDescriptor())
            .add(io.envoyproxy.envoy.config.trace.v3.OpenTelemetryConfig.getDescriptor())
            .add(io.envoyproxy.envoy.config.trace.v3.DatadogConfig.getDescriptor())
            // WasmPlugin: the ECDS resource and the plugin configuration it carries
            .add(io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.wasm.v3.Wasm.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.wasm.v3.Wasm.getDescriptor())
            .add(com.google.protobuf.StringValue.getDescriptor())
            // /debug/config_dump's envelope: Envoy's admin ConfigDump and its sections
            .add(io.envoyproxy.envoy.admin.v3.BootstrapConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.ClustersConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.EndpointsConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.ListenersConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.ScopedRoutesConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.RoutesConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.SecretsConfigDump.getDescriptor())
            .add(io.envoyproxy.envoy.admin.v3.EcdsConfigDump.getDescriptor())
            .build();

    private EnvoyTypes() {
    }
}
