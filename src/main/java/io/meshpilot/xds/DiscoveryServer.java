package io.meshpilot.xds;

import io.meshpilot.model.ConfigKey;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.Environment;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.ShardKey;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.monitoring.IstioCounter;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Component 7, the DiscoveryServer (istiod's xds.DiscoveryServer): config, service and
 * endpoint changes arrive here as {@link PushRequest}s, counted in istiod's
 * {@code pilot_inbound_updates} and {@code pilot_push_triggers}, and are debounced into
 * pushes to the ADS streams. Endpoint updates go into the {@link EndpointIndex} and become
 * incremental EDS requests unless the index says a full push is needed.
 */
public final class DiscoveryServer implements io.meshpilot.registry.RegistryUpdates, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DiscoveryServer.class.getName());
    static final IstioCounter INBOUND_UPDATES = IstioCounter.of("pilot_inbound_updates", "type",
            "Total number of updates received by pilot.");
    static final IstioCounter PUSH_TRIGGERS = IstioCounter.of("pilot_push_triggers", "type",
            "Total number of times a push was triggered, labeled by reason for the push.");

    static final IstioCounter XDS_PUSHES = IstioCounter.of("pilot_xds_pushes", "type",
            "Pilot build and send errors for lds, rds, cds and eds.");
    static final IstioCounter XDS_REJECTS = IstioCounter.of("pilot_total_xds_rejects", "type",
            "Total number of XDS responses from pilot rejected by proxy.");

    /**
     * @param features          the PILOT_* tunables (debounce, throttle, stream rate, XDS_AUTH, cache)
     * @param sweepConnections  Helidon hosts some xDS streams (--grpcTransport helidon, or gRPC
     *                          multiplexed on the http port) and has no connection age limit of
     *                          its own: the xDS server ends streams older than {@code maxConnectionAge}
     * @param maxConnectionAge  --keepaliveMaxServerConnectionAge
     */
    public record Options(io.meshpilot.features.PilotFeatures features, boolean sweepConnections,
                          java.time.Duration maxConnectionAge) {
    }

    private final Environment environment;
    private final io.meshpilot.grpc.GrpcServices grpcServices;
    private final io.meshpilot.config.ConfigController configs;
    private final Options options;
    private final io.meshpilot.security.Authenticators authenticators;

    /**
     * TLS credentials (gateways' credentialName): SDS serves them, and a change pushes SDS.
     * Also what a PushContext build can ask {@code credentials.exists(namespace, name)}.
     */
    private final io.meshpilot.security.credentials.CredentialsController credentials;

    public DiscoveryServer(Environment environment, io.meshpilot.config.ConfigController configs,
                           io.meshpilot.grpc.GrpcServices grpcServices, io.meshpilot.security.Authenticators authenticators,
                           io.meshpilot.security.credentials.CredentialsController credentials, Options options) {
        this.environment = environment;
        this.configs = configs;
        this.grpcServices = grpcServices;
        this.authenticators = authenticators;
        this.credentials = credentials;
        this.options = options;
    }

    private final List<Consumer<PushRequest>> listeners = new CopyOnWriteArrayList<>();
    private final java.util.Map<String, Connection> connections = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicReference<io.meshpilot.model.PushContext> pushContext =
            new java.util.concurrent.atomic.AtomicReference<>();
    private final java.util.concurrent.atomic.AtomicLong versions = new java.util.concurrent.atomic.AtomicLong();
    /** Node ids with pilot_xds_*_reject series, removed when the node's last stream ends. */
    private final java.util.Set<String> rejectingNodes = java.util.concurrent.ConcurrentHashMap.newKeySet();
    private volatile PushPipeline pipeline;
    private volatile ConnectionSweeper sweeper;
    private final SharedResponses shared = new SharedResponses();
    private final RequestNames requestNames = new RequestNames();
    private volatile XdsCache cache = new XdsCache(false);
    /** For each config object: its resourceVersion and the first push version that carried it. */
    private final java.util.Map<io.meshpilot.model.ConfigKey, long[]> pushedIn = new java.util.concurrent.ConcurrentHashMap<>();
    private final java.util.Map<io.meshpilot.model.ConfigKey, String> pushedRevision =
            new java.util.concurrent.ConcurrentHashMap<>();
    private final XdsMetrics.PushStatusGauges pushStatusGauges = new XdsMetrics.PushStatusGauges(this::diagnostics);

    /**
     * {@code ads} with its state-of-the-world method's marshallers wrapped: responses shared by
     * many proxies are written from their bytes ({@link SharedResponses}), and requests that
     * repeat a recent request's names reuse its decoded names ({@link RequestNames}).
     */
    @SuppressWarnings("unchecked")
    private io.grpc.ServerServiceDefinition withSotwMarshallers(io.grpc.ServerServiceDefinition ads) {
        io.grpc.ServerServiceDefinition.Builder b = io.grpc.ServerServiceDefinition.builder(
                ads.getServiceDescriptor().getName()); // a new descriptor: it must hold the new method instance
        String sotw = io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc
                .getStreamAggregatedResourcesMethod().getFullMethodName();
        for (io.grpc.ServerMethodDefinition<?, ?> m : ads.getMethods()) {
            if (m.getMethodDescriptor().getFullMethodName().equals(sotw)) {
                var def = (io.grpc.ServerMethodDefinition<io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest,
                        io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse>) m;
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
        io.meshpilot.features.PilotFeatures f = options.features();
        AdsService ads = new AdsService(this, new StreamRateLimiter(f.maxRequestsPerSecond(),
                java.time.Duration.ofSeconds(1)), f.xdsAuth() ? authenticators : null);
        grpcServices.register(() -> withSotwMarshallers(ads.bindService()),
                io.meshpilot.grpc.GrpcServices.Ports.PLAINTEXT_AND_SECURE);
        pipeline = new PushPipeline(this, f);
        if (options.sweepConnections()) {
            sweeper = new ConnectionSweeper(this, options.maxConnectionAge());
        }
        cache = new XdsCache(f.enableXdsCache());
        Generators.cache = cache;
        Generators.syncz = new SyncStatusGenerator(this::connections);
        Generators.sds = new SecretGenerator(() -> credentials);
        return "ADS (state of the world) on the gRPC ports; debounce " + f.debounceAfter().toMillis()
                + "ms/" + f.debounceMax().toSeconds() + "s, push throttle "
                + f.pushThrottle() + ", new streams " + f.maxRequestsPerSecond() + "/s";
    }

    /** istiod's xDS gauges (registered once the metrics registry is up). */
    public void registerMetrics() {
        io.helidon.metrics.api.Metrics.getOrCreate(io.helidon.metrics.api.Gauge.builder("xds_cache_size",
                () -> cache.size()).description("Current size of xds cache"));
        io.helidon.metrics.api.Metrics.getOrCreate(io.helidon.metrics.api.Gauge.builder("pilot_xds",
                () -> connections.size()).description("Number of endpoints connected to this pilot using XDS."));
        io.helidon.metrics.api.Metrics.getOrCreate(io.helidon.metrics.api.Gauge.builder("pilot_virt_services", () -> {
            io.meshpilot.model.PushContext p = pushContext.get();
            return p == null ? 0 : p.virtualServiceCount();
        }).description("Total virtual services known to pilot."));
        // live checks declare their metrics too: load them before the gauges are registered
        java.util.Objects.requireNonNull(io.meshpilot.networking.envoy.GatewayCredentialCheck.MISSING_CREDENTIAL);
        pushStatusGauges.registerKnown();
    }

    /** Start function: the first PushContext, once config and registries delivered their initial state. */
    public void firstPush() {
        // what the first push carries: every object at its revision now (for distribution status)
        for (io.meshpilot.config.Schema schema : configs.schemas().all()) {
            for (io.meshpilot.config.Config c : configs.store().list(schema.kind(), null)) {
                pushedRevision.put(c.key(), c.resourceVersion());
                pushedIn.put(c.key(), new long[] {1});
            }
        }
        pushContext.set(buildPushContext());
        installed(pushContext.get());
        LOG.log(Level.INFO, "push context ready version=" + pushContext.get().version() + " services="
                + pushContext.get().services().size() + " in " + pushContext.get().buildTime().toMillis() + " ms");
    }

    io.meshpilot.model.PushContext buildPushContext() {
        return io.meshpilot.model.PushContext.build(environment.serviceDiscovery(), configs.store(),
                environment.endpointIndex(), environment.mesh(), environment.domainSuffix(), versions.incrementAndGet());
    }

    /** Delta: only resources whose version the proxy does not hold, plus what no longer exists. */
    private void pushDelta(Connection con, Connection.Watch w, io.meshpilot.model.PushContext push) {
        Generator g = Generators.forConnection(w.typeUrl(), con);
        java.util.List<com.google.protobuf.Any> resources = g == null ? java.util.List.of()
                : g.generate(con.proxy(), push, w.names(), w.wildcard());
        var response = io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse.newBuilder()
                .setTypeUrl(w.typeUrl())
                .setSystemVersionInfo(Long.toString(push.version()))
                .setNonce(java.util.UUID.randomUUID().toString());
        java.util.Set<String> present = new java.util.HashSet<>();
        for (com.google.protobuf.Any a : resources) {
            String name = ResourceNames.of(a);
            String version = ResourceNames.version(a);
            present.add(name);
            if (!version.equals(w.held.get(name))) {
                response.addResources(io.envoyproxy.envoy.service.discovery.v3.Resource.newBuilder()
                        .setName(name).setVersion(version).setResource(a));
            }
        }
        java.util.Set<String> gone = new java.util.TreeSet<>(w.held.keySet());
        if (!w.wildcard()) {
            gone.addAll(w.names()); // subscribed names that do not exist are reported removed
        }
        gone.removeAll(present);
        response.addAllRemovedResources(gone);
        var built = response.build();
        con.sendDelta(w, built);
    }

    /** Streams are served once the first PushContext exists. */
    boolean ready() {
        return pushContext.get() != null;
    }

    public io.meshpilot.model.PushContext currentPushContext() {
        return pushContext.get();
    }

    void setPushContext(io.meshpilot.model.PushContext push) {
        cache.invalidateAll();
        pushContext.set(push);
        installed(push);
    }

    /**
     * The problems of the PushContext in force plus those checked against live state: a
     * connected gateway's credentialName that names no credential (credentials change without
     * a new PushContext). What /debug/push_status and the push-status gauges show.
     */
    public io.meshpilot.model.PushDiagnostics diagnostics() {
        io.meshpilot.model.PushContext push = pushContext.get();
        if (push == null) {
            return io.meshpilot.model.PushDiagnostics.EMPTY;
        }
        // every gauge scrape and push_status read asks: computed once per push, connect or credential change
        long changes = liveStateChanges.get();
        DiagnosticsMemo memo = diagnosticsMemo;
        if (memo != null && memo.push() == push && memo.changes() == changes) {
            return memo.diagnostics();
        }
        io.meshpilot.model.PushDiagnostics d = liveDiagnostics(push);
        diagnosticsMemo = new DiagnosticsMemo(push, changes, d);
        return d;
    }

    /** Counts connects, disconnects and credential changes: what the live checks depend on besides the push. */
    private final java.util.concurrent.atomic.AtomicLong liveStateChanges = new java.util.concurrent.atomic.AtomicLong();
    private volatile DiagnosticsMemo diagnosticsMemo;

    private record DiagnosticsMemo(io.meshpilot.model.PushContext push, long changes,
                                   io.meshpilot.model.PushDiagnostics diagnostics) {
    }

    private io.meshpilot.model.PushDiagnostics liveDiagnostics(io.meshpilot.model.PushContext push) {
        java.util.List<io.meshpilot.model.Proxy> routers = connections().stream().map(Connection::proxy)
                .filter(p -> p.type() == io.meshpilot.model.Proxy.Type.ROUTER && !p.proxyless()).toList();
        if (routers.isEmpty()) {
            return push.diagnostics();
        }
        var out = io.meshpilot.model.PushDiagnostics.builder().addAll(push.diagnostics());
        io.meshpilot.networking.envoy.GatewayCredentialCheck.run(push, routers, credentials::exists,
                (ns, name) -> credentials.caCertificate(ns, name).isPresent(), out);
        return out.build();
    }

    /** A new PushContext is in force: its problems are in the gauges and, when there are any, the log. */
    private void installed(io.meshpilot.model.PushContext push) {
        pushStatusGauges.registerKnown();
        if (!push.diagnostics().isEmpty()) {
            java.util.StringJoiner counts = new java.util.StringJoiner(" ");
            push.diagnostics().all().forEach((metric, entries) -> counts.add(metric + "=" + entries.size()));
            LOG.log(Level.WARNING, "push context version=" + push.version() + " applies what it can; config problems: "
                    + counts + " (details in /debug/push_status)");
        }
    }

    /** A full push of version {@code version} carries these config objects (at their current revisions). */
    void recordPushed(java.util.Set<io.meshpilot.model.ConfigKey> keys, long version) {
        for (io.meshpilot.model.ConfigKey k : keys) {
            configs.store().get(k.kind(), k.namespace(), k.name()).ifPresentOrElse(c -> {
                pushedRevision.put(k, c.resourceVersion());
                pushedIn.put(k, new long[] {version});
            }, () -> {
                pushedRevision.remove(k);
                pushedIn.remove(k);
            });
        }
    }

    /**
     * Where one config object stands: the push version that carried its current
     * resourceVersion (0 when it was not pushed yet, e.g. still debouncing; 1 when the first
     * push already carried it), and per connected proxy whether it ACKed that
     * version for every type it watches, is pending, or NACKed it.
     */
    public DistributionStatus status(io.meshpilot.config.Config config) {
        io.meshpilot.model.ConfigKey key = config.key();
        long version = 0;
        boolean current = config.resourceVersion().equals(pushedRevision.get(key));
        if (current) {
            version = pushedIn.get(key)[0];
        }
        java.util.List<DistributionStatus.ProxyStatus> proxies = new java.util.ArrayList<>();
        for (Connection c : connections()) {
            String state = version == 0 ? "PENDING" : "ACKED";
            String error = "";
            for (Connection.Watch w : c.watches().values()) {
                if (w.names().isEmpty() && !w.wildcard()) {
                    continue; // nothing subscribed of this type: nothing to ACK
                }
                long acked = parse(w.versionAcked());
                long nacked = w.nackError().isEmpty() ? -1 : parse(w.nackVersion());
                if (version > 0 && nacked >= version) {
                    state = "NACKED";
                    error = TypeUrls.shortName(w.typeUrl()) + ": " + w.nackError();
                    break;
                }
                if (version == 0 || acked < version) {
                    state = "PENDING";
                }
            }
            proxies.add(new DistributionStatus.ProxyStatus(c.proxy().id(), c.id(), state, error));
        }
        return new DistributionStatus(key.toString(), config.resourceVersion(), version, proxies);
    }

    /**
     * What a connected proxy gets now, per type, for what it subscribes to: generated from the
     * current PushContext (istiod's config_dump), as Envoy JSON.
     */
    public java.util.Optional<String> configDump(String proxyId) {
        Connection con = connections().stream().filter(c -> c.proxy().id().equals(proxyId) || c.id().equals(proxyId))
                .findFirst().orElse(null);
        if (con == null) {
            return java.util.Optional.empty();
        }
        com.google.gson.JsonObject out = new com.google.gson.JsonObject();
        io.meshpilot.model.PushContext push = pushContext.get();
        com.google.protobuf.util.JsonFormat.Printer printer = com.google.protobuf.util.JsonFormat.printer()
                .usingTypeRegistry(io.meshpilot.networking.EnvoyTypes.REGISTRY).omittingInsignificantWhitespace();
        con.watches().forEach((type, w) -> {
            Generator g = Generators.forConnection(type, con);
            com.google.gson.JsonArray resources = new com.google.gson.JsonArray();
            if (g != null) {
                for (com.google.protobuf.Any a : g.generate(con.proxy(), push, w.names(), w.wildcard())) {
                    if (type.equals(TypeUrls.SECRET)) {
                        a = SecretGenerator.redacted(a); // never a private key in a dump
                    }
                    try {
                        resources.add(com.google.gson.JsonParser.parseString(printer.print(a)));
                    } catch (com.google.protobuf.InvalidProtocolBufferException e) {
                        resources.add(a.getTypeUrl());
                    }
                }
            }
            out.add(TypeUrls.shortName(type), resources);
        });
        return java.util.Optional.of(out.toString());
    }


    private static long parse(String version) {
        try {
            return version.isEmpty() ? -1 : Long.parseLong(version);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** The sweep that ends Helidon's xDS streams at the maximum connection age; empty when no xDS is on Helidon. */
    java.util.Optional<ConnectionSweeper> sweeper() {
        return java.util.Optional.ofNullable(sweeper);
    }

    public java.util.Collection<Connection> connections() {
        return java.util.List.copyOf(connections.values());
    }

    boolean isConnected(Connection c) {
        return connections.containsKey(c.id());
    }

    void connected(Connection c) {
        c.onSendFailure(e -> {
            // a write failed: the stream is gone (cancelled, reset, or Helidon's flow-control
            // timeout on a reader that stopped reading)
            LOG.log(Level.INFO, "xDS stream gone, dropping proxy=" + c.proxy().id() + " connection=" + c.id()
                    + ": " + e.getMessage());
            disconnected(c);
        });
        connections.put(c.id(), c);
        liveStateChanges.incrementAndGet();
        LOG.log(Level.INFO, "xDS connected proxy=" + c.proxy().id() + " connection=" + c.id() + " peer=" + c.peer()
                + " generator=" + (c.proxy().proxyless() ? "grpc" : "envoy")
                + (c.identities().isEmpty() ? "" : " identities=" + c.identities()));
    }

    void disconnected(Connection c) {
        if (connections.remove(c.id()) != null) {
            liveStateChanges.incrementAndGet();
            LOG.log(Level.INFO, "xDS disconnected proxy=" + c.proxy().id() + " connection=" + c.id());
            dropRejectsIfGone(c.proxy().id());
        }
    }

    /** The node id is the client's choice: its reject series go with its last stream. */
    private void dropRejectsIfGone(String node) {
        if (rejectingNodes.contains(node) && connections.values().stream().noneMatch(o -> o.proxy().id().equals(node))) {
            rejectingNodes.remove(node);
            XdsMetrics.removeRejects(node);
        }
    }

    private void rejected(Connection con, String type, int code) {
        String metricType = TypeUrls.metricType(type);
        XDS_REJECTS.increment(metricType);
        if (switch (metricType) { case "lds", "rds", "cds", "eds" -> true; default -> false; }) {
            // node and err as istiod labels them: one series per NACKing proxy and code, while it is connected
            rejectingNodes.add(con.proxy().id());
            XdsMetrics.rejects(metricType).increment(con.proxy().id(), Integer.toString(code));
            if (!isConnected(con)) { // the stream ended while its NACK was counted
                dropRejectsIfGone(con.proxy().id());
            }
        }
    }

    /** One request on a stream: ACK, NACK, stale nonce, or a subscription to answer. */
    void process(Connection con, io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest req) {
        String type = req.getTypeUrl();
        Connection.Watch w = con.watch(type);
        if (!req.getResponseNonce().isEmpty()) {
            if (!req.getResponseNonce().equals(w.nonceSent)) {
                LOG.log(Level.DEBUG, () -> "stale nonce ignored proxy=" + con.proxy().id() + " type=" + type);
                return;
            }
            if (req.hasErrorDetail()) {
                w.nackError = req.getErrorDetail().getMessage();
                w.nackVersion = w.versionSent;
                rejected(con, type, req.getErrorDetail().getCode());
                LOG.log(Level.WARNING, "xDS NACK proxy=" + con.proxy().id() + " type=" + TypeUrls.shortName(type)
                        + " version=" + w.versionSent + " error=" + w.nackError);
                return; // not re-sent: the next change brings a new version
            }
            w.nonceAcked = req.getResponseNonce();
            w.versionAcked = req.getVersionInfo();
            w.nackError = "";
            if (w.names.sameAs(req.getResourceNamesList())) {
                return; // a plain ACK: the subscription did not change
            }
        }
        SubscribedNames names = SubscribedNames.of(req.getResourceNamesList());
        w.names = names;
        w.wildcard = names.isEmpty() && (type.equals(TypeUrls.LISTENER) || type.equals(TypeUrls.CLUSTER))
                || names.contains("*");
        push(con, w, pushContext.get());
    }

    /**
     * One request on a delta stream: subscription changes (subscribe, unsubscribe, "*"),
     * initial versions the proxy already holds, then ACK/NACK as for state of the world.
     */
    void processDelta(Connection con, io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest req) {
        String type = req.getTypeUrl();
        boolean known = con.watches().containsKey(type);
        Connection.Watch w = con.watch(type);
        if (!req.getResponseNonce().isEmpty()) {
            if (!req.getResponseNonce().equals(w.nonceSent)) {
                return; // stale
            }
            if (req.hasErrorDetail()) {
                w.nackError = req.getErrorDetail().getMessage();
                w.nackVersion = w.versionSent;
                rejected(con, type, req.getErrorDetail().getCode());
                LOG.log(Level.WARNING, "xDS NACK (delta) proxy=" + con.proxy().id() + " type="
                        + TypeUrls.shortName(type) + " error=" + w.nackError);
                return;
            }
            w.nonceAcked = req.getResponseNonce();
            w.versionAcked = w.versionSent;
            w.nackError = "";
            if (req.getResourceNamesSubscribeCount() == 0 && req.getResourceNamesUnsubscribeCount() == 0) {
                return;
            }
        }
        java.util.Set<String> names = new java.util.HashSet<>(w.names());
        names.addAll(req.getResourceNamesSubscribeList());
        req.getResourceNamesUnsubscribeList().forEach(n -> {
            names.remove(n);
            w.held.remove(n);
        });
        if (!known) {
            w.held.putAll(req.getInitialResourceVersionsMap());
            w.wildcard = req.getResourceNamesSubscribeCount() == 0
                    && (type.equals(TypeUrls.LISTENER) || type.equals(TypeUrls.CLUSTER));
        }
        if (names.remove("*")) {
            w.wildcard = true;
        }
        if (req.getResourceNamesUnsubscribeList().contains("*")) {
            w.wildcard = false;
        }
        w.names = SubscribedNames.of(names);
        push(con, w, pushContext.get());
    }

    /** Generates one type for one connection and sends it. */
    void push(Connection con, Connection.Watch w, io.meshpilot.model.PushContext push) {
        long start = System.nanoTime();
        if (con.delta()) {
            pushDelta(con, w, push);
        } else {
            pushSotw(con, w, push);
        }
        XdsMetrics.PUSH_TIME.record(TypeUrls.metricType(w.typeUrl()), java.time.Duration.ofNanos(System.nanoTime() - start));
    }

    private void pushSotw(Connection con, Connection.Watch w, io.meshpilot.model.PushContext push) {
        Generator g = Generators.forConnection(w.typeUrl(), con); // SDS is bound to the stream's identities
        con.send(w, sotwResponse(con.proxy(), g, w.typeUrl(), w.names(), w.wildcard(), push, cache, shared));
    }

    /**
     * The state-of-the-world response for one watch of one proxy, from generator {@code g}
     * (null: a type nobody serves). Static over the cache and shared responses it is given so
     * that the sidecar translation benchmark (test helper {@code io.meshpilot.xds.SidecarXds})
     * measures exactly the path a push takes.
     */
    static io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse sotwResponse(io.meshpilot.model.Proxy proxy,
            Generator g, String typeUrl, java.util.Set<String> names, boolean wildcard,
            io.meshpilot.model.PushContext push, XdsCache cache, SharedResponses shared) {
        if (g != null && (typeUrl.equals(TypeUrls.CLUSTER) || typeUrl.equals(TypeUrls.ENDPOINT))) {
            // CDS and EDS depend only on what the key names: shared by every proxy asking the same
            // a sidecar's wildcard CDS also holds its own inbound clusters: those ports join the scope
            String scope = push.scope(proxy).key();
            if (wildcard && typeUrl.equals(TypeUrls.CLUSTER) && !proxy.proxyless()
                    && proxy.type() == io.meshpilot.model.Proxy.Type.SIDECAR) {
                scope = scope + "|inbound:" + io.meshpilot.networking.envoy.SidecarClusterBuilder.inboundKey(proxy, push);
            } else if (wildcard && typeUrl.equals(TypeUrls.CLUSTER) && !proxy.proxyless()) {
                // a gateway's CDS adds BlackHole and its AUTO_PASSTHROUGH clusters
                scope = scope + "|router:" + io.meshpilot.networking.envoy.GatewayClusterBuilder.key(
                        io.meshpilot.networking.envoy.MergedGateway.of(proxy, push));
            }
            var key = new SharedResponses.Key(typeUrl, push.version(), cache.endpointGeneration(),
                    scope, proxy.proxyless(), wildcard, names);
            return shared.get(key, () -> io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
                    .setTypeUrl(typeUrl)
                    .setVersionInfo(Long.toString(push.version()))
                    .setNonce(java.util.UUID.randomUUID().toString())
                    .addAllResources(g.generate(proxy, push, names, wildcard))
                    .build());
        }
        java.util.List<com.google.protobuf.Any> resources;
        if (g == null) {
            LOG.log(Level.INFO, "unknown xDS type answered empty proxy=" + proxy.id() + " type=" + typeUrl);
            resources = java.util.List.of();
        } else {
            resources = g.generate(proxy, push, names, wildcard);
        }
        return io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse.newBuilder()
                .setTypeUrl(typeUrl)
                .setVersionInfo(Long.toString(push.version()))
                .setNonce(java.util.UUID.randomUUID().toString())
                .addAllResources(resources)
                .build();
    }

    /** A config change (any kind but the ServiceEntry registry's own): always a full push. */
    public void configUpdate(PushRequest request) {
        INBOUND_UPDATES.increment("config");
        push(request);
    }

    /**
     * TLS credentials added, changed or removed: an SDS-only push (istiod's SecretTrigger,
     * not full) to the proxies watching one of them; no new PushContext.
     */
    public void credentialsUpdate(java.util.Set<ConfigKey> secrets) {
        liveStateChanges.incrementAndGet();
        if (secrets.isEmpty()) {
            return;
        }
        INBOUND_UPDATES.increment("config");
        push(PushRequest.incremental(TriggerReason.SECRET, secrets.toArray(ConfigKey[]::new)));
    }

    /** The TLS credentials of this server (what a PushContext build checks credentialName against). */
    public io.meshpilot.security.credentials.CredentialStore credentials() {
        return credentials;
    }

    /** A service added, changed or deleted by a registry: a full push naming it. */
    @Override
    public void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted) {
        INBOUND_UPDATES.increment(deleted ? "svcdelete" : "svc");
        if (deleted) {
            environment.endpointIndex().deleteShard(shard, hostname, namespace);
            cache.invalidateHosts(java.util.Set.of(hostname));
        }
        push(PushRequest.full(TriggerReason.SERVICE, new ConfigKey("ServiceEntry", namespace, hostname)));
    }

    /**
     * A registry's new endpoints for one service in one shard. Incremental EDS when only
     * endpoints changed; full when the service's first endpoints arrive or its identities
     * change; nothing when nothing changed.
     */
    @Override
    public void edsUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        INBOUND_UPDATES.increment("eds");
        EndpointIndex.PushType type = environment.endpointIndex().update(shard, hostname, namespace, endpoints);
        if (type != EndpointIndex.PushType.NONE) {
            cache.invalidateHosts(java.util.Set.of(hostname));
        }
        ConfigKey key = new ConfigKey("ServiceEntry", namespace, hostname);
        switch (type) {
            case INCREMENTAL -> push(PushRequest.incremental(TriggerReason.ENDPOINT, key));
            case FULL -> push(PushRequest.full(TriggerReason.ENDPOINT, key));
            case NONE -> LOG.log(Level.DEBUG, () -> "endpoints unchanged service=" + hostname + "/" + namespace);
        }
    }

    /** Endpoints recorded without a push: the service update that follows pushes fully. */
    @Override
    public void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        INBOUND_UPDATES.increment("eds");
        environment.endpointIndex().update(shard, hostname, namespace, endpoints);
        cache.invalidateHosts(java.util.Set.of(hostname));
    }

    private void push(PushRequest request) {
        for (TriggerReason r : request.reasons()) {
            PUSH_TRIGGERS.increment(r.label());
        }
        PushPipeline p = pipeline;
        // before the first PushContext no proxy is served, and that context includes the change
        if (p != null && pushContext.get() != null) {
            p.enqueue(request);
        }
        LOG.log(Level.DEBUG, () -> "push request full=" + request.full() + " configs=" + request.configsUpdated()
                + " reasons=" + request.reasons());
        for (Consumer<PushRequest> l : listeners) {
            try {
                l.accept(request);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "push request listener failed", e);
            }
        }
    }

    /** Observes every push request (the push pipeline of the xDS issue; tests). */
    public void addListener(Consumer<PushRequest> l) {
        listeners.add(l);
    }

    public void removeListener(Consumer<PushRequest> l) {
        listeners.remove(l);
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
        connections.values().forEach(Connection::close);
    }

    /** Current value of pilot_inbound_updates{type}. */
    public long inboundUpdates(String type) {
        return INBOUND_UPDATES.value(type);
    }

    /** Current value of pilot_push_triggers{type}. */
    public long pushTriggers(TriggerReason reason) {
        return PUSH_TRIGGERS.value(reason.label());
    }
}
