package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.admin.v3.ConfigDump;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.meshpilot.config.Config;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.model.Environment;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.monitoring.IstioGauge;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.DebugAuthorizer;
import io.meshpilot.security.credentials.CredentialsController;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Component 7, the DiscoveryServer (istiod's xds.DiscoveryServer): owns and wires its parts,
 * each with one job, all per instance (several servers run in one JVM):
 * <ul>
 * <li>{@link XdsUpdates}: where config, credential, service and endpoint changes enter;</li>
 * <li>{@link PushPipeline}: debounce, new PushContext, push queue;</li>
 * <li>{@link AdsProtocol} over the {@link ConnectionTable}: requests, ACK/NACK, responses;</li>
 * <li>{@link XdsStatus}: the PushContext in force, diagnostics, distribution status, config dump;</li>
 * <li>{@link Generators}: the generator per type URL and proxy flavour, over one {@link XdsCache}.</li>
 * </ul>
 */
public final class DiscoveryServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DiscoveryServer.class.getName());

    /**
     * @param features          the PILOT_* tunables (debounce, throttle, stream rate, XDS_AUTH, cache)
     * @param sweepConnections  Helidon hosts some xDS streams (--grpcTransport helidon, or gRPC
     *                          multiplexed on the http port) and has no connection age limit of
     *                          its own: the xDS server ends streams older than {@code maxConnectionAge}
     * @param maxConnectionAge  --keepaliveMaxServerConnectionAge
     * @param clusterAliases    --clusterAliases: a proxy whose CLUSTER_ID is an alias is in the cluster it names
     * @param podName           this replica's name ($POD_NAME), how istioctl tells the control planes apart
     * @param systemNamespace   --namespace, istiod's own: its identities read every istio.io/debug page
     */
    public record Options(PilotFeatures features, boolean sweepConnections, Duration maxConnectionAge,
                          Map<String, String> clusterAliases, String podName, String systemNamespace) {
        public Options {
            clusterAliases = Map.copyOf(clusterAliases);
        }

        public Options(PilotFeatures features, boolean sweepConnections, Duration maxConnectionAge) {
            this(features, sweepConnections, maxConnectionAge, Map.of(), "", "istio-system");
        }
    }

    private final GrpcServices grpcServices;
    private final Options options;
    private final Authenticators authenticators;

    private final XdsCache cache;
    private final SharedResponses shared = new SharedResponses();
    private final RequestNames requestNames = new RequestNames();
    private final ConnectionTable connections = new ConnectionTable();
    private final SendBudget sendBudget;
    private final XdsStatus status;
    private final AdsProtocol protocol;
    private final XdsUpdates updates;
    private volatile DebugPages debugPages = DebugPages.NONE;
    private final GatewayNameCache gatewayNames;
    private volatile PushPipeline pipeline;
    private volatile ConnectionSweeper sweeper;

    /**
     * @param credentials TLS credentials (gateways' credentialName): SDS serves them, a change
     *                    pushes SDS, and the live checks ask whether a named one exists
     */
    public DiscoveryServer(Environment environment, ConfigController configs, GrpcServices grpcServices,
                           Authenticators authenticators, CredentialsController credentials, Options options) {
        this.grpcServices = grpcServices;
        this.authenticators = authenticators;
        this.options = options;
        this.cache = new XdsCache(options.features().enableXdsCache(), options.features().xdsCacheSize());
        this.sendBudget = new SendBudget(options.features().xdsSend().bytesInFlight());
        Generators generators = new Generators(cache, () -> credentials, new Generators.DebugSources(connections,
                this::dumpWithoutEndpoints, options.systemNamespace(), () -> debugPages), options.features().ambient(),
                environment::ambientIndexes);
        this.gatewayNames = new GatewayNameCache(GatewayNameCache.Resolver.SYSTEM, GatewayNameCache.REFRESH,
                this::gatewayNamesChanged);
        this.status = new XdsStatus(environment, configs, credentials, cache, generators, connections, gatewayNames);
        this.protocol = new AdsProtocol(connections, generators, cache, shared, status::currentPushContext,
                StreamLimits.DEFAULT, new DebugAuthorizer(options.features().debugAuth()),
                new ControlPlaneInstance(options.podName(), BuildInfo.current()).proto());
        this.updates = new XdsUpdates(environment, cache, status);
    }

    /** A gateway name resolving to other addresses is a networks change, as istiod's NetworkManager reports it. */
    private void gatewayNamesChanged() {
        updates.networkGatewaysUpdate();
    }

    /**
     * {@code ads} with its state-of-the-world method's marshallers wrapped: responses shared by
     * many proxies are written from their bytes ({@link SharedResponses}), and requests that
     * repeat a recent request's names reuse its decoded names ({@link RequestNames}).
     */
    @SuppressWarnings("unchecked")
    private ServerServiceDefinition withSotwMarshallers(ServerServiceDefinition ads) {
        ServerServiceDefinition.Builder b = ServerServiceDefinition.builder(
                ads.getServiceDescriptor().getName()); // a new descriptor: it must hold the new method instance
        String sotw = AggregatedDiscoveryServiceGrpc
                .getStreamAggregatedResourcesMethod().getFullMethodName();
        for (ServerMethodDefinition<?, ?> m : ads.getMethods()) {
            if (m.getMethodDescriptor().getFullMethodName().equals(sotw)) {
                var def = (ServerMethodDefinition<DiscoveryRequest,
                        DiscoveryResponse>) m;
                var md = def.getMethodDescriptor();
                b.addMethod(md.toBuilder(requestNames.marshaller(md.getRequestMarshaller()),
                                shared.marshaller(md.getResponseMarshaller())).build(),
                        def.getServerCallHandler());
            } else {
                b.addMethod(m);
            }
        }
        return b.build();
    }

    /**
     * Registers ADS on the gRPC services and starts the push pipeline; returns what the
     * start-up log says. Streams are served once {@link #firstPush} built a PushContext.
     */
    public String start() {
        PilotFeatures f = options.features();
        AdsService ads = new AdsService(status::ready, connections, protocol, new StreamRateLimiter(
                f.maxRequestsPerSecond(), Duration.ofSeconds(1)), f.xdsAuth() ? authenticators : null, options.clusterAliases(),
                sendBudget, f.xdsSend().sendTimeout(), f.ambient().enabled());
        grpcServices.register(() -> withSotwMarshallers(ads.bindService()), GrpcServices.Ports.PLAINTEXT_AND_SECURE);
        pipeline = new PushPipeline(status, connections, protocol, f);
        updates.pushTo(pipeline);
        if (options.sweepConnections()) {
            sweeper = new ConnectionSweeper(connections, options.maxConnectionAge());
        }
        return "ADS (state of the world) on the gRPC ports; debounce " + f.debounceAfter().toMillis()
                + "ms/" + f.debounceMax().toSeconds() + "s, push throttle "
                + f.pushThrottle() + ", new streams " + f.maxRequestsPerSecond() + "/s, bytes in flight "
                + (sendBudget.limit() >> 20) + " MiB, send timeout " + f.xdsSend().sendTimeout().toMillis() + " ms";
    }

    /** istiod's xDS gauges (registered once the metrics registry is up). */
    public void registerMetrics() {
        IstioGauge.register("xds_cache_size", "Current size of xds cache", cache::size);
        XdsMetrics.WRITE_TIMEOUTS.exportAtZero();
        XdsMetrics.SEND_BUDGET_WAITS.exportAtZero();
        IstioGauge.register("meshpilot_xds_send_bytes_in_flight",
                "Response bytes handed to the gRPC transport and not yet taken by the socket.",
                XdsMetrics.SEND_BYTES_IN_FLIGHT::get);
        IstioGauge.register("meshpilot_xds_send_bytes_parked",
                "Response bytes of streams unwritable past the park time, held outside the send budget.",
                XdsMetrics.SEND_BYTES_PARKED::get);
        IstioGauge.register("meshpilot_xds_send_budget_bytes",
                "The most response bytes in flight before writes wait (MESHPILOT_XDS_BYTES_IN_FLIGHT).",
                sendBudget::limit);
        XdsMetrics.INTERNAL_ERRORS.exportAtZero();
        status.registerMetrics();
    }

    /** Start function: the first PushContext, once config and registries delivered their initial state. */
    public void firstPush() {
        PushContext push = status.firstPush();
        LOG.log(Level.INFO, "push context ready version=" + push.version() + " services="
                + push.services().size() + " in " + push.buildTime().toMillis() + " ms");
    }

    /** Where config, credential, service and endpoint changes enter the push path. */
    public XdsUpdates updates() {
        return updates;
    }

    public PushContext currentPushContext() {
        return status.currentPushContext();
    }

    /** See {@link XdsStatus#diagnostics()}. */
    public PushDiagnostics diagnostics() {
        return status.diagnostics();
    }

    /** See {@link XdsStatus#diagnostics(io.meshpilot.model.PushContext)}. */
    public PushDiagnostics diagnostics(PushContext push) {
        return status.diagnostics(push);
    }

    /** See {@link XdsStatus#status(Config)}. */
    public DistributionStatus status(Config config) {
        return status.status(config);
    }

    /** See {@link XdsStatus#status(List)}. */
    public List<DistributionStatus> status(List<Config> configs) {
        return status.status(configs);
    }

    /** What istio.io/debug/config_dump answers: the status is built after the generators that read it. */
    private ConfigDump dumpWithoutEndpoints(Connection con) {
        return status.configDump(con, false);
    }

    /** See {@link XdsStatus#configDump(Connection, boolean)}. */
    public ConfigDump configDump(Connection con, boolean includeEndpoints) {
        return status.configDump(con, includeEndpoints);
    }

    /**
     * The connection a debug request's {@code proxyID} names: as istiod, the first whose
     * connection id contains it (a pod's {@code name.namespace} is enough).
     */
    public Optional<Connection> debugConnection(String proxyId) {
        return connections.debugConnection(proxyId);
    }

    /**
     * Whether {@code proxyId} names a proxy connected here outside {@code namespace}: what a
     * caller of that namespace is told is not connected (istiod's CallerNamespaceKey).
     */
    public boolean connectedOutside(String proxyId, String namespace) {
        return connections.debugConnection(proxyId).filter(c -> !c.proxy().namespace().equals(namespace)).isPresent();
    }

    /** The admin debug pages that answer istio.io/debug requests from now on. */
    public void serveDebugPages(DebugPages pages) {
        this.debugPages = pages;
    }

    /** Ends the connection's stream (istiod's {@code /debug/force_disconnect}); the proxy reconnects. */
    public void forceDisconnect(Connection con) {
        LOG.log(Level.INFO, "xDS stream closed by /debug/force_disconnect proxy=" + con.proxy().id()
                + " connection=" + con.id());
        connections.disconnected(con);
        con.end(Status.UNAVAILABLE.withDescription("disconnected by /debug/force_disconnect; reconnect"));
    }

    /** See {@link XdsStatus#generated(Connection, String)}. */
    public List<Any> generated(Connection con, String typeUrl) {
        return status.generated(con, typeUrl);
    }

    /** What the XDS cache holds now (/debug/cachez). */
    public List<CachedResource> cacheSnapshot() {
        return cache.snapshot();
    }

    /** Empties the XDS cache (/debug/cachez?clear=true). */
    public void clearCache() {
        cache.clearAll();
    }

    public Collection<Connection> connections() {
        return connections.all();
    }

    /** The sweep that ends Helidon's xDS streams at the maximum connection age; empty when no xDS is on Helidon. */
    Optional<ConnectionSweeper> sweeper() {
        return Optional.ofNullable(sweeper);
    }

    @Override
    public void close() {
        PushPipeline p = pipeline;
        if (p != null) {
            p.close();
        }
        if (sweeper != null) {
            sweeper.close();
        }
        gatewayNames.close();
        connections.closeAll();
    }
}
