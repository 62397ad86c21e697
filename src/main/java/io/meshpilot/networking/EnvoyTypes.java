package io.meshpilot.networking;

import com.github.udpa.udpa.type.v1.TypedStruct;
import com.google.protobuf.StringValue;
import com.google.protobuf.TypeRegistry;
import io.envoyproxy.envoy.admin.v3.BootstrapConfigDump;
import io.envoyproxy.envoy.admin.v3.ClustersConfigDump;
import io.envoyproxy.envoy.admin.v3.EcdsConfigDump;
import io.envoyproxy.envoy.admin.v3.EndpointsConfigDump;
import io.envoyproxy.envoy.admin.v3.ListenersConfigDump;
import io.envoyproxy.envoy.admin.v3.RoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.ScopedRoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.SecretsConfigDump;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.endpoint.v3.ClusterLoadAssignment;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.route.v3.RouteConfiguration;
import io.envoyproxy.envoy.config.trace.v3.DatadogConfig;
import io.envoyproxy.envoy.config.trace.v3.OpenTelemetryConfig;
import io.envoyproxy.envoy.config.trace.v3.ZipkinConfig;
import io.envoyproxy.envoy.extensions.access_loggers.file.v3.FileAccessLog;
import io.envoyproxy.envoy.extensions.access_loggers.filters.cel.v3.ExpressionFilter;
import io.envoyproxy.envoy.extensions.access_loggers.open_telemetry.v3.OpenTelemetryAccessLogConfig;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.Cors;
import io.envoyproxy.envoy.extensions.filters.http.cors.v3.CorsPolicy;
import io.envoyproxy.envoy.extensions.filters.http.grpc_stats.v3.FilterConfig;
import io.envoyproxy.envoy.extensions.filters.http.fault.v3.HTTPFault;
import io.envoyproxy.envoy.extensions.filters.http.jwt_authn.v3.JwtAuthentication;
import io.envoyproxy.envoy.extensions.filters.http.local_ratelimit.v3.LocalRateLimit;
import io.envoyproxy.envoy.extensions.filters.http.lua.v3.Lua;
import io.envoyproxy.envoy.extensions.filters.http.router.v3.Router;
import io.envoyproxy.envoy.extensions.filters.listener.http_inspector.v3.HttpInspector;
import io.envoyproxy.envoy.extensions.filters.listener.original_dst.v3.OriginalDst;
import io.envoyproxy.envoy.extensions.filters.listener.tls_inspector.v3.TlsInspector;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.tcp_proxy.v3.TcpProxy;
import io.envoyproxy.envoy.extensions.formatter.req_without_query.v3.ReqWithoutQuery;
import io.envoyproxy.envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig;
import io.envoyproxy.envoy.extensions.retry.host.previous_hosts.v3.PreviousHostsPredicate;
import io.envoyproxy.envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.meshpilot.api.envoy.config.filter.http.alpn.v2alpha1.FilterConfig.AlpnOverride;
import io.meshpilot.api.envoy.extensions.stats.PluginConfig;

/**
 * Every message type our Envoy resources carry in an {@code Any} (resources and their typed
 * configs), for printing them as JSON ({@code /debug/config_dump}): a type missing here
 * prints as nothing useful, so a new typed config joins this list.
 */
public final class EnvoyTypes {
    public static final TypeRegistry REGISTRY = TypeRegistry.newBuilder()
            .add(Listener.getDescriptor())
            .add(RouteConfiguration.getDescriptor())
            .add(Cluster.getDescriptor())
            .add(ClusterLoadAssignment.getDescriptor())
            .add(HttpConnectionManager.getDescriptor())
            .add(TcpProxy.getDescriptor())
            .add(Router.getDescriptor())
            .add(HTTPFault.getDescriptor())
            .add(CorsPolicy.getDescriptor())
            .add(Cors.getDescriptor())
            .add(JwtAuthentication.getDescriptor())
            .add(Secret.getDescriptor())
            .add(OriginalDst.getDescriptor())
            .add(TlsInspector.getDescriptor())
            .add(HttpInspector.getDescriptor())
            .add(UpstreamTlsContext.getDescriptor())
            .add(DownstreamTlsContext.getDescriptor())
            .add(RawBuffer.getDescriptor())
            .add(HttpProtocolOptions.getDescriptor())
            .add(PreviousHostsPredicate.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.rbac.v3.RBAC.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.rbac.v3.RBAC.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.ext_authz.v3.ExtAuthz.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.ext_authz.v3.ExtAuthz.getDescriptor())
            .add(UriTemplateMatchConfig.getDescriptor())
            // the filters EnvoyFilters most often insert (Istio's samples): Lua and local rate limiting
            .add(Lua.getDescriptor())
            .add(LocalRateLimit.getDescriptor())
            // Telemetry: access loggers, their CEL filter and formatter, tracers
            .add(FileAccessLog.getDescriptor())
            .add(OpenTelemetryAccessLogConfig.getDescriptor())
            .add(ExpressionFilter.getDescriptor())
            .add(ReqWithoutQuery.getDescriptor())
            .add(ZipkinConfig.getDescriptor())
            .add(OpenTelemetryConfig.getDescriptor())
            .add(DatadogConfig.getDescriptor())
            // istio-proxy's own filters: stats, metadata exchange (TypedStruct as istiod writes it), gRPC stats
            .add(PluginConfig.getDescriptor())
            // istio.alpn's FilterConfig: registered through its file (its name clashes with grpc_stats')
            .add(AlpnOverride.getDescriptor())
            .add(TypedStruct.getDescriptor())
            .add(FilterConfig.getDescriptor())
            // WasmPlugin: the ECDS resource and the plugin configuration it carries
            .add(TypedExtensionConfig.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.http.wasm.v3.Wasm.getDescriptor())
            .add(io.envoyproxy.envoy.extensions.filters.network.wasm.v3.Wasm.getDescriptor())
            .add(StringValue.getDescriptor())
            // /debug/config_dump's envelope: Envoy's admin ConfigDump and its sections
            .add(BootstrapConfigDump.getDescriptor())
            .add(ClustersConfigDump.getDescriptor())
            .add(EndpointsConfigDump.getDescriptor())
            .add(ListenersConfigDump.getDescriptor())
            .add(ScopedRoutesConfigDump.getDescriptor())
            .add(RoutesConfigDump.getDescriptor())
            .add(SecretsConfigDump.getDescriptor())
            .add(EcdsConfigDump.getDescriptor())
            .build();

    private EnvoyTypes() {
    }
}
