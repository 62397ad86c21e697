package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.admin.v3.BootstrapConfigDump;
import io.envoyproxy.envoy.admin.v3.ClustersConfigDump;
import io.envoyproxy.envoy.admin.v3.ConfigDump;
import io.envoyproxy.envoy.admin.v3.EcdsConfigDump;
import io.envoyproxy.envoy.admin.v3.EndpointsConfigDump;
import io.envoyproxy.envoy.admin.v3.ListenersConfigDump;
import io.envoyproxy.envoy.admin.v3.RoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.ScopedRoutesConfigDump;
import io.envoyproxy.envoy.admin.v3.SecretsConfigDump;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigChanges;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.model.Environment;
import io.meshpilot.model.GatewayNames;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.monitoring.IstioGauge;
import io.meshpilot.networking.envoy.GatewayCredentialCheck;
import io.meshpilot.security.credentials.CredentialsController;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.StringJoiner;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The PushContext in force and what is known about it: its problems with the live checks
 * (/debug/push_status and the push-status gauges), where each config object stands in its
 * distribution to the proxies, and a proxy's config dump.
 */
final class XdsStatus {
    private static final System.Logger LOG = System.getLogger(XdsStatus.class.getName());

    private final Environment environment;
    private final ConfigController configs;
    private final CredentialsController credentials;
    private final XdsCache cache;
    private final Generators generators;
    private final ConnectionTable connections;

    private final AtomicReference<PushContext> pushContext = new AtomicReference<>();
    private final AtomicLong versions = new AtomicLong();
    /** For each config object: the revision of it a push carried, and the first push version that did. */
    private final Map<ConfigKey, Pushed> pushed = new ConcurrentHashMap<>();
    private final XdsMetrics.PushStatusGauges pushStatusGauges = new XdsMetrics.PushStatusGauges(this::diagnostics);
    /** Counts credential changes: what the live checks depend on besides the push and the connections. */
    private final AtomicLong credentialChanges = new AtomicLong();
    private volatile DiagnosticsMemo diagnosticsMemo;
    private final GatewayNames gatewayNames;

    XdsStatus(Environment environment, ConfigController configs, CredentialsController credentials, XdsCache cache,
              Generators generators, ConnectionTable connections, GatewayNames gatewayNames) {
        this.environment = environment;
        this.gatewayNames = gatewayNames;
        this.configs = configs;
        this.credentials = credentials;
        this.cache = cache;
        this.generators = generators;
        this.connections = connections;
    }

    private record Pushed(Config config, long version) {
    }

    private record DiagnosticsMemo(PushContext push, long connectionChanges, long credentialChanges,
                                   long recordChanges, PushDiagnostics diagnostics) {
    }

    /** The first PushContext, once config and registries delivered their initial state. */
    PushContext firstPush() {
        // what the first push carries: every object at its revision now (for distribution status)
        for (Schema schema : configs.schemas().all()) {
            for (Config c : configs.store().list(schema.kind(), null)) {
                pushed.put(c.key(), new Pushed(c, 1));
            }
        }
        PushContext push = buildPushContext();
        pushContext.set(push);
        installed(push);
        return push;
    }

    PushContext buildPushContext() {
        return PushContext.build(environment.serviceDiscovery(), configs.store(), environment.endpointIndex(),
                environment.mesh(), environment.networks(), environment.domainSuffix(), versions.incrementAndGet(),
                environment.jwksResolver(), new PushContext.ServerSettings(gatewayNames, environment.metadataExchange(),
                environment.traceSampling(), environment.gatewayApi(),
                environment.ambientWaypoints(), environment.hboneSend()));
    }

    /** Streams are served once the first PushContext exists. */
    boolean ready() {
        return pushContext.get() != null;
    }

    PushContext currentPushContext() {
        return pushContext.get();
    }

    void setPushContext(PushContext push) {
        cache.invalidateAll();
        pushContext.set(push);
        installed(push);
    }

    /** Credentials changed: the live checks may see something else. */
    void credentialsChanged() {
        credentialChanges.incrementAndGet();
    }

    /** The gauges of the push-status metrics declared so far, and pilot_virt_services. */
    void registerMetrics() {
        IstioGauge.register("pilot_virt_services", "Total virtual services known to pilot.", () -> {
            PushContext p = pushContext.get();
            return p == null ? 0 : p.virtualServiceCount();
        });
        // live checks declare their metrics too: load them before the gauges are registered
        Objects.requireNonNull(GatewayCredentialCheck.MISSING_CREDENTIAL);
        pushStatusGauges.registerKnown();
    }

    /**
     * The problems of the PushContext in force plus those checked against live state: a
     * connected gateway's credentialName that names no credential (credentials change without
     * a new PushContext), and, while a proxyless gRPC proxy is connected, the config gRPC proxies
     * do not get. What /debug/push_status and the push-status gauges show.
     */
    PushDiagnostics diagnostics() {
        return diagnostics(pushContext.get());
    }

    /**
     * As {@link #diagnostics()}, for one given PushContext: a reader that shows the push's
     * version next to its problems must ask for that push's, or a push installed in between
     * pairs one version with another's problems.
     */
    PushDiagnostics diagnostics(PushContext push) {
        if (push == null) {
            return PushDiagnostics.EMPTY;
        }
        // every gauge scrape and push_status read asks: computed once per push, connect or credential change
        long connectionChanges = connections.changes();
        long credentialChanges = this.credentialChanges.get();
        long recordChanges = push.records().changes();
        DiagnosticsMemo memo = diagnosticsMemo;
        if (memo != null && memo.push() == push && memo.connectionChanges() == connectionChanges
                && memo.credentialChanges() == credentialChanges && memo.recordChanges() == recordChanges) {
            return memo.diagnostics();
        }
        PushDiagnostics d = liveDiagnostics(push);
        diagnosticsMemo = new DiagnosticsMemo(push, connectionChanges, credentialChanges, recordChanges, d);
        return d;
    }

    private PushDiagnostics liveDiagnostics(PushContext push) {
        List<Proxy> routers = connections.all().stream().map(Connection::proxy)
                .filter(p -> p.type() == Proxy.Type.ROUTER && !p.proxyless()).toList();
        boolean proxyless = connections.all().stream().anyMatch(c -> c.proxy().proxyless());
        boolean recorded = push.records().changes() > 0;
        if (routers.isEmpty() && !proxyless && !recorded) {
            return push.diagnostics();
        }
        var out = PushDiagnostics.builder().addAll(push.diagnostics());
        if (recorded) {
            // what the generators found while building the connected proxies' config (istiod's AddMetric)
            out.addAll(push.records().snapshot());
        }
        if (proxyless) {
            // what gRPC proxies do not get matters only while one is connected
            out.addAll(push.proxylessDiagnostics());
        }
        if (!routers.isEmpty()) {
            GatewayCredentialCheck.run(push, routers, credentials::exists,
                    (ns, name) -> credentials.caCertificate(ns, name).isPresent(), out);
        }
        return out.build();
    }

    /** A new PushContext is in force: its problems are in the gauges and, when there are any, the log. */
    private void installed(PushContext push) {
        pushStatusGauges.registerKnown();
        if (!push.diagnostics().isEmpty()) {
            StringJoiner counts = new StringJoiner(" ");
            push.diagnostics().all().forEach((metric, entries) -> counts.add(metric + "=" + entries.size()));
            LOG.log(Level.WARNING, "push context version=" + push.version() + " applies what it can; config problems: "
                    + counts + " (details in /debug/push_status)");
        }
    }

    /** A full push of version {@code version} carries these config objects (at their current revisions). */
    void recordPushed(Set<ConfigKey> keys, long version) {
        for (ConfigKey k : keys) {
            configs.store().get(k.kind(), k.namespace(), k.name()).ifPresentOrElse(
                    c -> pushed.put(k, new Pushed(c, version)), () -> pushed.remove(k));
        }
    }

    /**
     * Where one config object stands: the push version that carried its current revision (0
     * when it was not pushed yet, e.g. still debouncing; 1 when the first push already carried
     * it), and per connected proxy whether it ACKed that version for every type it watches, is
     * pending, or NACKed it. A revision that differs from the pushed one only where no push is
     * needed (status, labels and annotations Istio does not own) counts as pushed with it: a
     * status write is no new config for the proxies.
     */
    DistributionStatus status(Config config) {
        return status(List.of(config)).get(0);
    }

    /** As {@link #status(Config)} for many objects, each proxy's state worked out once per push version. */
    List<DistributionStatus> status(List<Config> configList) {
        Map<Long, List<DistributionStatus.ProxyStatus>> byVersion = new HashMap<>();
        List<Connection> connected = List.copyOf(connections.all());
        List<DistributionStatus> out = new ArrayList<>(configList.size());
        for (Config config : configList) {
            long version = pushVersion(config);
            out.add(new DistributionStatus(config.key().toString(), config.resourceVersion(), version,
                    byVersion.computeIfAbsent(version, v -> proxiesAt(v, connected))));
        }
        return out;
    }

    private long pushVersion(Config config) {
        Pushed p = pushed.get(config.key());
        if (p == null) {
            return 0;
        }
        boolean current = p.config().resourceVersion().equals(config.resourceVersion())
                || !ConfigChanges.needsPush(p.config(), config);
        return current ? p.version() : 0;
    }

    private static List<DistributionStatus.ProxyStatus> proxiesAt(long version, List<Connection> connected) {
        List<DistributionStatus.ProxyStatus> proxies = new ArrayList<>();
        for (Connection c : connected) {
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
        return List.copyOf(proxies);
    }

    /**
     * What a connected proxy gets now, as istiod's {@code /debug/config_dump}: Envoy's
     * {@code admin.v3.ConfigDump} with the dynamic resources generated from the current
     * PushContext for what the proxy subscribes to, in Envoy's order (bootstrap, clusters,
     * endpoints only when asked, listeners, scoped routes, routes, secrets, ECDS). Every
     * section carries the push version; secrets are redacted (see {@link #generated}).
     */
    ConfigDump configDump(Connection con, boolean includeEndpoints) {
        PushContext push = pushContext.get();
        String version = push == null ? "" : Long.toString(push.version());
        var clusters = ClustersConfigDump.newBuilder().setVersionInfo(version);
        for (Any a : generated(con, TypeUrls.CLUSTER)) {
            clusters.addDynamicActiveClusters(ClustersConfigDump.DynamicCluster
                    .newBuilder().setVersionInfo(version).setCluster(a));
        }
        var listeners = ListenersConfigDump.newBuilder().setVersionInfo(version);
        for (Any a : generated(con, TypeUrls.LISTENER)) {
            listeners.addDynamicListeners(ListenersConfigDump.DynamicListener.newBuilder()
                    .setName(listenerName(a))
                    .setActiveState(ListenersConfigDump.DynamicListenerState.newBuilder()
                            .setVersionInfo(version).setListener(a)));
        }
        var routes = RoutesConfigDump.newBuilder();
        for (Any a : generated(con, TypeUrls.ROUTE)) {
            routes.addDynamicRouteConfigs(RoutesConfigDump.DynamicRouteConfig.newBuilder()
                    .setVersionInfo(version).setRouteConfig(a));
        }
        var secrets = SecretsConfigDump.newBuilder();
        for (Any a : generated(con, TypeUrls.SECRET)) {
            // the name is inside the Secret; the dump shows it next to the redacted secret as Envoy's does
            secrets.addDynamicActiveSecrets(SecretsConfigDump.DynamicSecret.newBuilder()
                    .setVersionInfo(version).setName(secretName(a)).setSecret(a));
        }
        var extensions = EcdsConfigDump.newBuilder();
        for (Any a : generated(con, TypeUrls.EXTENSION_CONFIG)) {
            extensions.addEcdsFilters(EcdsConfigDump.EcdsFilterConfig.newBuilder()
                    .setVersionInfo(version).setEcdsFilter(a));
        }
        var dump = ConfigDump.newBuilder()
                .addConfigs(Any.pack(BootstrapConfigDump.getDefaultInstance()))
                .addConfigs(Any.pack(clusters.build()));
        if (includeEndpoints) {
            var endpoints = EndpointsConfigDump.newBuilder();
            for (Any a : generated(con, TypeUrls.ENDPOINT)) {
                endpoints.addDynamicEndpointConfigs(EndpointsConfigDump
                        .DynamicEndpointConfig.newBuilder().setVersionInfo(version).setEndpointConfig(a));
            }
            dump.addConfigs(Any.pack(endpoints.build()));
        }
        return dump.addConfigs(Any.pack(listeners.build()))
                .addConfigs(Any.pack(
                        ScopedRoutesConfigDump.getDefaultInstance()))
                .addConfigs(Any.pack(routes.build()))
                .addConfigs(Any.pack(secrets.build()))
                .addConfigs(Any.pack(extensions.build()))
                .build();
    }

    /**
     * What {@code con} gets now of one type, generated from the current PushContext for the
     * names it watches; empty when it does not watch the type or nobody serves it (istiod's
     * getConfigDumpByResourceType skips both). Secrets come redacted.
     */
    List<Any> generated(Connection con, String typeUrl) {
        Connection.Watch w = con.watches().get(typeUrl);
        Generator g = w == null ? null : generators.forConnection(typeUrl, con);
        if (g == null) {
            return List.of();
        }
        List<Any> out = new ArrayList<>();
        for (Any a : g.generate(con.proxy(), pushContext.get(), w.names(), w.wildcard())) {
            out.add(typeUrl.equals(TypeUrls.SECRET) ? SecretGenerator.redacted(a) : a);
        }
        return out;
    }

    private static String listenerName(Any a) {
        try {
            return a.unpack(Listener.class).getName();
        } catch (InvalidProtocolBufferException e) {
            return "";
        }
    }

    private static String secretName(Any a) {
        try {
            return a.unpack(Secret.class).getName();
        } catch (InvalidProtocolBufferException e) {
            return "";
        }
    }

    private static long parse(String version) {
        try {
            return version.isEmpty() ? -1 : Long.parseLong(version);
        } catch (NumberFormatException e) {
            return -1;
        }
    }
}
