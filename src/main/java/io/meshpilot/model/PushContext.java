package io.meshpilot.model;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.api.networking.v1alpha3.CaptureMode;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.api.security.v1beta1.JWTRule;
import io.meshpilot.api.security.v1beta1.RequestAuthentication;
import io.meshpilot.features.TraceSampling;
import io.meshpilot.config.Config;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.RouteSemantics;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.config.store.ConfigStore;
import io.meshpilot.features.MetadataExchange;
import io.meshpilot.util.LabelSelector;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Predicate;
import java.util.stream.Stream;

/**
 * One immutable view of everything a push needs (istiod's PushContext), built for each full
 * push: services by hostname, VirtualServices by gateway and host, DestinationRules and
 * Sidecars by namespace, and what each namespace may see. Visibility follows istiod:
 * {@code exportTo} on services, VirtualServices and DestinationRules (empty: the mesh
 * config's default; {@code .} the owner's namespace, {@code *} all, {@code ~} none), and a
 * proxy's Sidecar egress hosts on top. Short hosts in Istio config ({@code reviews}) resolve
 * against the config's namespace and the domain suffix. Endpoints are not copied: EDS reads
 * the live endpoint index, so endpoint changes need no new PushContext.
 */
public final class PushContext {
    /** The gateway name of VirtualServices that apply to sidecars and proxyless clients. */
    public static final String MESH_GATEWAY = "mesh";

    private final Map<String, Service> servicesByHost;
    private final Map<String, Map<String, List<Config>>> virtualServicesByGateway;
    private final Map<String, List<Config>> destinationRulesByHost;
    private final Map<String, List<Config>> sidecarsByNamespace;
    private final MeshDefaults defaults;
    private final EndpointIndex endpoints;
    private final String domainSuffix;
    private final Instant builtAt;
    private final Duration buildTime;
    private final long version;
    private final MeshConfig mesh;
    private final List<Config> peerAuthentications;
    /** AuthorizationPolicies by namespace, oldest first (istiod's AuthorizationPolicies.NamespaceToPolicies). */
    private final Map<String, List<Config>> authorizationPolicies;
    /** RequestAuthentications, oldest first. */
    private final List<Config> requestAuthentications;
    /** The remote key sets of the RequestAuthentications, as held when this push was built. */
    private final Map<JwksResolver.JwksRef, String> remoteKeySets;
    private final List<Config> gateways;
    /** VirtualServices without hosts, by namespace/name: only reachable as a root route's delegate. */
    private final Map<String, Config> delegates;
    /** EnvoyFilters by namespace with their converted patches; set once in {@link #build}. */
    private volatile EnvoyFilterIndex envoyFilters = EnvoyFilterIndex.EMPTY;
    /** Conflicting or unsupported config found by {@link ConfigConflicts}; set once in {@link #build}. */
    private volatile PushDiagnostics diagnostics = PushDiagnostics.EMPTY; // set once, before build() returns
    /** What the generators record while building proxies' config from this push. */
    private final PushRecords records = new PushRecords();
    /** What proxyless gRPC proxies do not get ({@link UnappliedConfig#proxyless}); set once in {@link #build}. */
    private volatile PushDiagnostics proxylessDiagnostics = PushDiagnostics.EMPTY;
    /** The east-west gateways of the networks (split-horizon EDS); set once in {@link #build}. */
    private volatile NetworkGateways networkGateways = NetworkGateways.NONE;
    /** Telemetry and WasmPlugin objects, oldest first; set once in {@link #build}. */
    private volatile ExtensionConfigs extensionConfigs = ExtensionConfigs.NONE;
    /** PILOT_TRACE_SAMPLING in force; set once in {@link #build}. */
    private volatile double traceSampling = TraceSampling.DEFAULT_PERCENT;

    /** istiod's metadata-exchange switches for istio-proxy nodes; set once in {@link #build}. */
    private volatile MetadataExchange metadataExchange = MetadataExchange.DEFAULTS;

    /** Which services each waypoint serves (none unless ambient waypoints are on); set once in {@link #build}. */
    private volatile WaypointServices waypointServices = WaypointServices.NONE;
    /** Whether waypoint proxies get config (PILOT_ENABLE_AMBIENT_WAYPOINTS); set once in {@link #build}. */
    private volatile boolean waypoints;

    /** Whether sidecars and gateways send HBONE; set once in {@link #build}. */
    private volatile HboneSend hboneSend = HboneSend.OFF;

    /** The Gateway API settings of this push (strict merging, ReferenceGrants); set once in {@link #build}. */
    private volatile GatewayApiSettings gatewayApi = GatewayApiSettings.DEFAULTS;

    /**
     * How Gateways generated from the Kubernetes Gateway API are served.
     *
     * @param strictMerging   PILOT_ENABLE_STRICT_GATEWAY_MERGING (true): a proxy serving a managed Gateway API
     *                        Gateway gets no classic Gateway of another namespace (istiod's filterStrictGatewayMerging)
     * @param referenceGrants the ReferenceGrants in force (istiod's PushContext.SecretAllowed): which cross-namespace
     *                        Secrets a Gateway's certificate references may name
     */
    public record GatewayApiSettings(boolean strictMerging, ReferenceGrants referenceGrants) {
        public static final GatewayApiSettings DEFAULTS = new GatewayApiSettings(true, ReferenceGrants.NONE);
    }

    /** The Gateway API settings this push was built with. */
    public GatewayApiSettings gatewayApi() {
        return gatewayApi;
    }

    /** The server's metadata-exchange switches (PILOT_ENABLE_METADATA_EXCHANGE, PILOT_MX_ADDITIONAL_LABELS). */
    /** Which services each waypoint serves (istiod's ServicesForWaypoint). */
    /** Whether waypoint proxies are served: policies may attach to them by targetRefs. */
    public boolean waypoints() {
        return waypoints;
    }

    public WaypointServices waypointServices() {
        return waypointServices;
    }

    public MetadataExchange metadataExchange() {
        return metadataExchange;
    }

    /** Whether sidecars and gateways send HBONE to the workloads that take it. */
    public HboneSend hboneSend() {
        return hboneSend;
    }

    /** The mesh config this push was built with (connect timeout, keepalive and other cluster defaults). */
    public MeshConfig mesh() {
        return mesh;
    }

    /** The mesh config's visibility defaults. */
    private record MeshDefaults(List<String> serviceExportTo, List<String> virtualServiceExportTo,
                                List<String> destinationRuleExportTo, String rootNamespace) {
        static MeshDefaults of(MeshConfig mesh) {
            return new MeshDefaults(List.copyOf(mesh.getDefaultServiceExportToList()),
                    List.copyOf(mesh.getDefaultVirtualServiceExportToList()),
                    List.copyOf(mesh.getDefaultDestinationRuleExportToList()),
                    mesh.getRootNamespace().isEmpty() ? "istio-system" : mesh.getRootNamespace());
        }
    }

    private PushContext(Map<String, Service> services, Map<String, Map<String, List<Config>>> virtualServices,
                        Map<String, List<Config>> destinationRules, Map<String, List<Config>> sidecars,
                        MeshDefaults defaults, MeshConfig mesh, EndpointIndex endpoints, String domainSuffix,
                        Duration buildTime, long version, List<Config> peerAuthentications, List<Config> gateways,
                        Map<String, Config> delegates, Map<String, List<Config>> authorizationPolicies,
                        List<Config> requestAuthentications, Map<JwksResolver.JwksRef, String> remoteKeySets) {
        this.mesh = mesh;
        this.authorizationPolicies = copyLists(authorizationPolicies);
        this.requestAuthentications = List.copyOf(requestAuthentications);
        this.remoteKeySets = Map.copyOf(remoteKeySets);
        this.delegates = Map.copyOf(delegates);
        this.gateways = List.copyOf(gateways);
        this.peerAuthentications = List.copyOf(peerAuthentications);
        this.servicesByHost = Map.copyOf(services);
        Map<String, Map<String, List<Config>>> vs = new HashMap<>();
        virtualServices.forEach((gw, byHost) -> {
            Map<String, List<Config>> copy = new HashMap<>();
            byHost.forEach((h, l) -> copy.put(h, List.copyOf(l)));
            vs.put(gw, Map.copyOf(copy));
        });
        this.virtualServicesByGateway = Map.copyOf(vs);
        this.destinationRulesByHost = copyLists(destinationRules);
        this.sidecarsByNamespace = copyLists(sidecars);
        this.defaults = defaults;
        this.endpoints = endpoints;
        this.domainSuffix = domainSuffix;
        this.builtAt = Instant.now();
        this.buildTime = buildTime;
        this.version = version;
    }

    private static Map<String, List<Config>> copyLists(Map<String, List<Config>> m) {
        Map<String, List<Config>> out = new HashMap<>();
        m.forEach((k, v) -> out.put(k, List.copyOf(v)));
        return Map.copyOf(out);
    }

    /**
     * Builds a snapshot from the registries, the config store and the mesh config, without
     * remote key sets: every RequestAuthentication rule that names a jwksUri (or only an
     * issuer) gets the fail-closed {@link JwksResolver#PUBLIC_ONLY_JWKS}.
     */
    public static PushContext build(ServiceDiscovery discovery, ConfigStore store, EndpointIndex endpoints,
                                    MeshConfig mesh, String domainSuffix, long version) {
        return build(discovery, store, endpoints, mesh, domainSuffix, version, JwksResolver.NONE);
    }

    /**
     * Builds a snapshot from the registries, the config store and the mesh config; the remote
     * key sets of RequestAuthentication rules come from {@code jwks} (which answers within its
     * own small bound, whatever the key servers do).
     */
    public static PushContext build(ServiceDiscovery discovery, ConfigStore store, EndpointIndex endpoints,
                                    MeshConfig mesh, String domainSuffix, long version, JwksResolver jwks) {
        return build(discovery, store, endpoints, mesh, MeshNetworks.getDefaultInstance(), domainSuffix, version, jwks);
    }

    /**
     * Builds a snapshot as {@link #build(ServiceDiscovery, ConfigStore, EndpointIndex, MeshConfig, String, long,
     * JwksResolver)}, with the networks' gateways of {@code meshNetworks} and of the registries.
     */
    public static PushContext build(ServiceDiscovery discovery, ConfigStore store, EndpointIndex endpoints,
                                    MeshConfig mesh, MeshNetworks meshNetworks, String domainSuffix, long version,
                                    JwksResolver jwks) {
        return build(discovery, store, endpoints, mesh, meshNetworks, domainSuffix, version, jwks, ServerSettings.DEFAULTS);
    }

    /**
     * What the server, not the config, decides about a push: how network gateways given by
     * hostname resolve and the env-var switches that shape generated config.
     *
     * @param gatewayNames     resolves east-west gateways given by hostname
     * @param metadataExchange PILOT_ENABLE_METADATA_EXCHANGE, PILOT_MX_ADDITIONAL_LABELS
     * @param traceSampling    PILOT_TRACE_SAMPLING: tracing's sampling percentage where the ProxyConfig sets none
     * @param gatewayApi       how Gateway API config is served (strict merging, ReferenceGrants)
     * @param waypoints        PILOT_ENABLE_AMBIENT with PILOT_ENABLE_AMBIENT_WAYPOINTS: services are bound to the
     *                         waypoints their {@code istio.io/use-waypoint} labels name ({@link WaypointServices})
     * @param hboneSend        PILOT_ENABLE_SENDING_HBONE, PILOT_PREFER_SENDING_HBONE with ambient
     */
    public record ServerSettings(GatewayNames gatewayNames, MetadataExchange metadataExchange, double traceSampling,
                                 GatewayApiSettings gatewayApi, boolean waypoints, HboneSend hboneSend) {
        public static final ServerSettings DEFAULTS = new ServerSettings(GatewayNames.NONE, MetadataExchange.DEFAULTS,
                TraceSampling.DEFAULT_PERCENT);

        public ServerSettings(GatewayNames gatewayNames, MetadataExchange metadataExchange, double traceSampling) {
            this(gatewayNames, metadataExchange, traceSampling, GatewayApiSettings.DEFAULTS);
        }

        /** Without ambient waypoints. */
        public ServerSettings(GatewayNames gatewayNames, MetadataExchange metadataExchange, double traceSampling,
                              GatewayApiSettings gatewayApi) {
            this(gatewayNames, metadataExchange, traceSampling, gatewayApi, false);
        }

        /** Without HBONE sending. */
        public ServerSettings(GatewayNames gatewayNames, MetadataExchange metadataExchange, double traceSampling,
                              GatewayApiSettings gatewayApi, boolean waypoints) {
            this(gatewayNames, metadataExchange, traceSampling, gatewayApi, waypoints, HboneSend.OFF);
        }
    }

    /**
     * Builds a snapshot as {@link #build(ServiceDiscovery, ConfigStore, EndpointIndex, MeshConfig, MeshNetworks,
     * String, long, JwksResolver)}, with the server's own settings.
     */
    public static PushContext build(ServiceDiscovery discovery, ConfigStore store, EndpointIndex endpoints,
                                    MeshConfig mesh, MeshNetworks meshNetworks, String domainSuffix, long version,
                                    JwksResolver jwks, ServerSettings settings) {
        long t0 = System.nanoTime();
        Map<String, Service> services = new HashMap<>();
        ServiceDiscovery.Listing listing = discovery.listing();
        List<Service> duplicates = new ArrayList<>(listing.shadowed());
        for (Service s : listing.services()) {
            if (services.putIfAbsent(s.hostname(), s) != null) {
                duplicates.add(s);
            }
        }
        Map<String, Map<String, List<Config>>> vs = new HashMap<>();
        Map<String, Config> delegates = new HashMap<>();
        for (Config c : oldestFirst(store.list("VirtualService", null))) {
            VirtualService spec = (VirtualService) c.spec();
            if (spec.getHostsCount() == 0) {
                delegates.put(c.namespace() + "/" + c.name(), c);
                continue;
            }
            List<String> gateways = spec.getGatewaysCount() == 0 ? List.of(MESH_GATEWAY) : spec.getGatewaysList();
            for (String gw : gateways) {
                String gateway = gw.equals(MESH_GATEWAY) || gw.contains("/") ? gw : c.namespace() + "/" + gw;
                for (String host : spec.getHostsList()) {
                    vs.computeIfAbsent(gateway, g -> new HashMap<>())
                            .computeIfAbsent(resolve(host, c.namespace(), domainSuffix), h -> new ArrayList<>()).add(c);
                }
            }
        }
        Map<String, List<Config>> dr = new HashMap<>();
        for (Config c : oldestFirst(store.list("DestinationRule", null))) {
            dr.computeIfAbsent(resolve(((DestinationRule) c.spec()).getHost(), c.namespace(), domainSuffix),
                    h -> new ArrayList<>()).add(c);
        }
        dr.replaceAll((host, rules) -> BackendPolicyDestinationRules.merge(rules,
                mesh.getDefaultDestinationRuleExportToList()));
        Map<String, List<Config>> sidecars = new HashMap<>();
        for (Config c : oldestFirst(store.list("Sidecar", null))) {
            sidecars.computeIfAbsent(c.namespace(), n -> new ArrayList<>()).add(c);
        }
        List<Config> peerAuthentications = oldestFirst(store.list("PeerAuthentication", null));
        List<Config> gateways = oldestFirst(store.list("Gateway", null));
        Map<String, List<Config>> authorizationPolicies = new HashMap<>();
        for (Config c : oldestFirst(store.list("AuthorizationPolicy", null))) {
            authorizationPolicies.computeIfAbsent(c.namespace(), n -> new ArrayList<>()).add(c);
        }
        List<Config> requestAuthentications = oldestFirst(store.list("RequestAuthentication", null));
        Map<JwksResolver.JwksRef, String> keySets = jwks.resolve(remoteKeySetRefs(requestAuthentications));
        PushContext push = new PushContext(services, vs, dr, sidecars, MeshDefaults.of(mesh), mesh, endpoints,
                domainSuffix, Duration.ofNanos(System.nanoTime() - t0), version, peerAuthentications, gateways,
                delegates, authorizationPolicies, requestAuthentications, keySets);
        push.networkGateways = NetworkGateways.of(meshNetworks, discovery.networkGateways(), settings.gatewayNames());
        push.metadataExchange = settings.metadataExchange();
        push.traceSampling = settings.traceSampling();
        push.gatewayApi = settings.gatewayApi();
        push.waypoints = settings.waypoints();
        push.hboneSend = settings.hboneSend();
        push.waypointServices = settings.waypoints()
                ? WaypointServices.of(services.values(), discovery::namespaceLabels) : WaypointServices.NONE;
        push.extensionConfigs = new ExtensionConfigs(oldestFirst(store.list("Telemetry", null)),
                oldestFirst(store.list("WasmPlugin", null)));
        // problems are recorded, never fatal: the push goes on with what applies (istiod's ProxyStatus)
        PushDiagnostics.Builder diagnostics = PushDiagnostics.builder().addAll(ConfigConflicts.detect(push));
        UnappliedConfig.detect(push, store, diagnostics);
        unconvertedIngresses(store, diagnostics);
        push.envoyFilters = EnvoyFilterIndex.of(oldestFirst(store.list("EnvoyFilter", null)));
        diagnostics.addAll(push.envoyFilters.problems());
        for (Service s : duplicates) {
            // istiod's CDS normalizeClusters: the first cluster of a name is kept, the others are reported
            for (Port p : s.ports()) {
                String cluster = "outbound|" + p.port() + "||" + s.hostname();
                diagnostics.add(PushMetric.DUPLICATED_CLUSTERS, cluster,
                        "Duplicate cluster " + cluster + " found while pushing CDS");
            }
        }
        push.diagnostics = diagnostics.build();
        push.proxylessDiagnostics = UnappliedConfig.proxyless(push, store);
        return push;
    }

    /** The rules without inline keys: their keys come from the jwksUri or the issuer's OIDC discovery. */
    private static Set<JwksResolver.JwksRef> remoteKeySetRefs(List<Config> requestAuthentications) {
        Set<JwksResolver.JwksRef> refs = new LinkedHashSet<>();
        for (Config c : requestAuthentications) {
            for (var rule : ((RequestAuthentication) c.spec()).getJwtRulesList()) {
                if (rule.getJwks().isEmpty()) {
                    refs.add(jwksRef(rule));
                }
            }
        }
        return refs;
    }

    /** How a rule's remote key set is named (istiod's fetch timeout: the rule's, else 5s). */
    public static JwksResolver.JwksRef jwksRef(JWTRule rule) {
        Duration timeout = rule.hasTimeout()
                ? Duration.ofSeconds(rule.getTimeout().getSeconds(), rule.getTimeout().getNanos())
                : Duration.ofSeconds(5);
        return new JwksResolver.JwksRef(rule.getIssuer(), rule.getJwksUri(), timeout);
    }

    private static List<Config> oldestFirst(List<Config> configs) {
        List<Config> out = new ArrayList<>(configs);
        out.sort(Comparator.comparing((Config c) -> c.creationTimestamp() == null ? Instant.EPOCH : c.creationTimestamp())
                .thenComparing(Config::key));
        return out;
    }

    /**
     * istiod's exportTo rule: an empty list means the mesh default (itself empty: everyone);
     * {@code *} everyone, {@code ~} no one, {@code .} the owner's namespace, else the names.
     */
    static boolean exported(Collection<String> exportTo, List<String> meshDefault, String owner,
                            String viewer) {
        Collection<String> to = exportTo.isEmpty() ? meshDefault : exportTo;
        if (to.isEmpty() || to.contains("*")) {
            return true;
        }
        return to.contains(viewer) || to.contains(".") && owner.equals(viewer);
    }

    /** The Sidecar that applies to {@code proxy} (istiod's order) and what it lets the proxy see. */
    public ProxyScope scope(Proxy proxy) {
        if (proxy.type() == Proxy.Type.ROUTER) {
            return ProxyScope.of(proxy.namespace()); // istiod: Sidecar resources never apply to gateways
        }
        Config sidecar = null;
        List<Config> own = sidecarsByNamespace.getOrDefault(proxy.namespace(), List.of());
        for (Config c : own) {
            var selector = ((Sidecar) c.spec()).getWorkloadSelector().getLabelsMap();
            if (!selector.isEmpty() && LabelSelector.subsetOf(selector, proxy.labels())) {
                sidecar = c;
                break;
            }
        }
        if (sidecar == null) {
            sidecar = own.stream().filter(c -> !((Sidecar) c.spec()).hasWorkloadSelector()).findFirst()
                    .or(() -> sidecarsByNamespace.getOrDefault(defaults.rootNamespace(), List.of()).stream()
                            .filter(c -> !((Sidecar) c.spec()).hasWorkloadSelector()).findFirst())
                    .orElse(null);
        }
        if (sidecar == null) {
            return ProxyScope.of(proxy.namespace());
        }
        List<ProxyScope.EgressListener> egress = new ArrayList<>();
        for (var listener : ((Sidecar) sidecar.spec()).getEgressList()) {
            Port port = listener.hasPort() ? new Port(listener.getPort().getName(), listener.getPort().getNumber(),
                    Protocol.parse(listener.getPort().getProtocol())) : null;
            egress.add(new ProxyScope.EgressListener(port, listener.getBind(),
                    listener.getCaptureMode() == CaptureMode.NONE,
                    listener.getHostsList().stream().map(ProxyScope.EgressHost::parse).toList()));
        }
        if (egress.isEmpty()) {
            egress.add(ProxyScope.EgressListener.IMPORT_ALL); // istiod: a Sidecar without egress imports everything
        }
        return new ProxyScope(proxy.namespace(), sidecar, egress);
    }

    /** Istio's short-name rule: a host without a dot is {@code host.namespace.svc.domain}. */
    public static String resolve(String host, String namespace, String domainSuffix) {
        if (host.contains(".") || host.equals("*")) {
            return host;
        }
        return host + "." + namespace + ".svc." + domainSuffix;
    }

    /** A service by hostname, whoever may see it (registry views, EDS of a known cluster). */
    public Optional<Service> service(String hostname) {
        return Optional.ofNullable(servicesByHost.get(hostname));
    }

    /** A service by hostname if {@code scope} may see it (exportTo and Sidecar egress). */
    public Optional<Service> service(String hostname, ProxyScope scope) {
        return service(hostname).filter(s -> visible(s, scope));
    }

    public boolean visible(Service s, ProxyScope scope) {
        return exported(s.exportTo(), defaults.serviceExportTo(), s.namespace(), scope.namespace())
                && scope.egressAllows(s);
    }

    public Map<String, Service> services() {
        return servicesByHost;
    }

    /** The services {@code scope} may see, by hostname. */
    public List<Service> services(ProxyScope scope) {
        return servicesByHost.values().stream().filter(s -> visible(s, scope))
                .sorted(Comparator.comparing(Service::hostname)).toList();
    }

    /**
     * The services {@code scope} sees through one of its egress listeners (istiod's
     * IstioEgressListenerWrapper.Services): exported to it and imported by that listener's
     * hosts (and port), by hostname.
     */
    public List<Service> services(ProxyScope scope, ProxyScope.EgressListener listener) {
        return services(scope).stream().filter(s -> listener.imports(s, scope.namespace())).toList();
    }

    /**
     * The VirtualServices of {@code gateway} ({@link #MESH_GATEWAY} for sidecars) routing a
     * host that {@code scope}'s namespace may see, oldest first (the first match wins, as
     * istiod merges); for sidecars, Gateway API routes of the proxy's namespace first (istiod's
     * SelectVirtualServices with PILOT_UNIFIED_SIDECAR_SCOPE), so a consumer's route wins over
     * the producer's.
     */
    public List<Config> virtualServices(String gateway, String hostname, ProxyScope scope) {
        List<Config> all = virtualServicesByGateway.getOrDefault(gateway, Map.of()).getOrDefault(hostname, List.of());
        List<Config> visible = all.stream().filter(c -> exported(((VirtualService) c.spec()).getExportToList(),
                defaults.virtualServiceExportTo(), c.namespace(), scope.namespace())).toList();
        if (!gateway.equals(MESH_GATEWAY)) {
            return visible;
        }
        Predicate<Config> ownGatewayApiRoute = c -> RouteSemantics.gatewayApi(c) && c.namespace().equals(scope.namespace());
        return Stream.concat(visible.stream().filter(ownGatewayApiRoute), visible.stream().filter(ownGatewayApiRoute.negate()))
                .toList();
    }

    /**
     * The mesh VirtualServices routing HTTP and gRPC to {@code hostname} for sidecars and
     * proxyless clients of {@code scope}: {@link #virtualServices} without the Gateway API routes of
     * a third namespace. A Gateway API route in the service's namespace (the producer's) applies to
     * every client, one in another namespace (a consumer's) only to its own namespace's (istiod's
     * route.go buildSidecarVirtualHostsForVirtualService; its TCP and TLS routes are not restricted so).
     */
    public List<Config> meshHttpVirtualServices(String hostname, ProxyScope scope) {
        String serviceNamespace = service(hostname).map(Service::namespace).orElse(null);
        return virtualServices(MESH_GATEWAY, hostname, scope).stream().filter(c -> !RouteSemantics.gatewayApi(c)
                || serviceNamespace == null || c.namespace().equals(serviceNamespace)
                || c.namespace().equals(scope.namespace())).toList();
    }

    /**
     * The DestinationRule for {@code hostname} as seen from {@code scope}'s namespace, in
     * istiod's order: one in that namespace, else one in the service's namespace exported to
     * it, else one in the root namespace exported to it, else any other exported to it.
     */
    public Optional<Config> destinationRule(String hostname, ProxyScope scope) {
        List<Config> all = destinationRulesByHost.getOrDefault(hostname, List.of());
        if (all.isEmpty()) {
            return Optional.empty();
        }
        String viewer = scope.namespace();
        String serviceNamespace = service(hostname).map(Service::namespace).orElse(null);
        List<Config> exported = all.stream().filter(c -> c.namespace().equals(viewer) || exported(
                ((DestinationRule) c.spec()).getExportToList(), defaults.destinationRuleExportTo(), c.namespace(),
                viewer)).toList();
        for (String ns : Arrays.asList(viewer, serviceNamespace, defaults.rootNamespace())) {
            for (Config c : exported) {
                if (c.namespace().equals(ns)) {
                    return Optional.of(c);
                }
            }
        }
        return exported.stream().findFirst();
    }

    /**
     * The VirtualServices bound to {@code gateway} ({@code namespace/name}) that are exported to
     * {@code proxyNamespace}, oldest first, each once (istiod's VirtualServicesForGateway).
     */
    public List<Config> virtualServicesForGateway(String gateway, String proxyNamespace) {
        LinkedHashSet<Config> out = new LinkedHashSet<>();
        virtualServicesByGateway.getOrDefault(gateway, Map.of()).values().forEach(out::addAll);
        return out.stream().filter(c -> exported(((VirtualService) c.spec()).getExportToList(),
                        defaults.virtualServiceExportTo(), c.namespace(), proxyNamespace))
                .sorted(Comparator.comparing((Config c) -> c.creationTimestamp() == null ? Instant.EPOCH
                        : c.creationTimestamp()).thenComparing(Config::key))
                .toList();
    }

    /**
     * A delegate VirtualService (one without hosts) by namespace and name, if it is exported to
     * {@code rootNamespace}, the namespace of the VirtualService delegating to it.
     */
    public Optional<Config> delegateVirtualService(String namespace, String name, String rootNamespace) {
        Config c = delegates.get(namespace + "/" + name);
        if (c == null || !exported(((VirtualService) c.spec()).getExportToList(), defaults.virtualServiceExportTo(),
                c.namespace(), rootNamespace)) {
            return Optional.empty();
        }
        return Optional.of(c);
    }

    private volatile Boolean routesDependOnProxyLabels;

    /**
     * Whether some VirtualService for sidecars (or a delegate) matches on {@code sourceLabels}
     * (HTTP, TCP or TLS): only then do two proxies of one scope get different sidecar routes
     * and outbound listeners.
     */
    public boolean routesDependOnProxyLabels() {
        Boolean cached = routesDependOnProxyLabels;
        if (cached == null) {
            Stream<Config> all = Stream.concat(
                    virtualServicesByGateway.getOrDefault(MESH_GATEWAY, Map.of()).values().stream()
                            .flatMap(List::stream), delegates.values().stream());
            cached = all.anyMatch(c -> {
                VirtualService vs = (VirtualService) c.spec();
                return vs.getHttpList().stream().flatMap(r -> r.getMatchList().stream())
                        .anyMatch(m -> m.getSourceLabelsCount() > 0)
                        || vs.getTcpList().stream().flatMap(r -> r.getMatchList().stream())
                        .anyMatch(m -> m.getSourceLabelsCount() > 0)
                        || vs.getTlsList().stream().flatMap(r -> r.getMatchList().stream())
                        .anyMatch(m -> m.getSourceLabelsCount() > 0);
            });
            routesDependOnProxyLabels = cached; // the same answer whoever computes it first
        }
        return cached;
    }

    private volatile Boolean endpointsDependOnProxyLabels;

    /**
     * Whether the mesh config or some DestinationRule names {@code failoverPriority} labels, or
     * some service has a traffic distribution (which fails over by topology labels): only then
     * do two proxies of one scope and locality get different assignments.
     */
    public boolean endpointsDependOnProxyLabels() {
        Boolean cached = endpointsDependOnProxyLabels;
        if (cached == null) {
            cached = mesh.getLocalityLbSetting().getFailoverPriorityCount() > 0
                    || servicesByHost.values().stream().anyMatch(s -> s.trafficDistribution() != TrafficDistribution.ANY)
                    || destinationRulesByHost.values().stream().flatMap(List::stream)
                    .map(c -> (DestinationRule) c.spec())
                    .flatMap(dr -> Stream.concat(Stream.of(dr.getTrafficPolicy()),
                            dr.getSubsetsList().stream().map(Subset::getTrafficPolicy)))
                    .anyMatch(PushContext::namesFailoverPriority);
            endpointsDependOnProxyLabels = cached; // the same answer whoever computes it first
        }
        return cached;
    }

    private static boolean namesFailoverPriority(TrafficPolicy p) {
        return p.getLoadBalancer().getLocalityLbSetting().getFailoverPriorityCount() > 0
                || p.getPortLevelSettingsList().stream()
                .anyMatch(port -> port.getLoadBalancer().getLocalityLbSetting().getFailoverPriorityCount() > 0);
    }

    /** Every Gateway of the mesh, oldest first (a router proxy takes those whose selector matches its labels). */
    public List<Config> gateways() {
        return gateways;
    }

    /** Every PeerAuthentication of the mesh, oldest first (the inbound mTLS mode is derived from them). */
    /** All RequestAuthentications, oldest first. */
    public List<Config> requestAuthentications() {
        return requestAuthentications;
    }

    /**
     * The key set document of a rule without inline keys, as held when this push was built;
     * istiod's fail-closed {@link JwksResolver#PUBLIC_ONLY_JWKS} when none is.
     */
    public String remoteKeySet(JwksResolver.JwksRef ref) {
        return remoteKeySets.getOrDefault(ref, JwksResolver.PUBLIC_ONLY_JWKS);
    }

    public List<Config> peerAuthentications() {
        return peerAuthentications;
    }

    /** The AuthorizationPolicies of {@code namespace}, oldest first (creation time, then name). */
    public List<Config> authorizationPolicies(String namespace) {
        return authorizationPolicies.getOrDefault(namespace, List.of());
    }

    /** The EnvoyFilter config patches that apply to {@code proxy} (istiod's PushContext.EnvoyFilters). */
    public MergedEnvoyFilters envoyFilters(Proxy proxy) {
        return envoyFilters.forProxy(proxy, rootNamespace());
    }

    /** The mesh config's root namespace (istio-system unless set). */
    /** Telemetry objects of every namespace, oldest first (istiod's getTelemetries order). */
    public List<Config> telemetries() {
        return extensionConfigs.telemetries();
    }

    /** WasmPlugin objects of every namespace, oldest first. */
    public List<Config> wasmPlugins() {
        return extensionConfigs.wasmPlugins();
    }

    public String rootNamespace() {
        return defaults.rootNamespace();
    }

    /** The networks' east-west gateways; none outside a multi-network mesh. */
    public NetworkGateways networkGateways() {
        return networkGateways;
    }

    /** PILOT_TRACE_SAMPLING: the tracing sampling percentage where the ProxyConfig sets none. */
    public double traceSampling() {
        return traceSampling;
    }

    public EndpointIndex endpoints() {
        return endpoints;
    }

    public String domainSuffix() {
        return domainSuffix;
    }

    public int virtualServiceCount() {
        return (int) virtualServicesByGateway.values().stream().flatMap(m -> m.values().stream())
                .flatMap(List::stream).distinct().count();
    }

    public Instant builtAt() {
        return builtAt;
    }

    public Duration buildTime() {
        return buildTime;
    }

    /** The Ingresses the store could not convert in full: one push-status entry each, with every reason. */
    private static void unconvertedIngresses(ConfigStore store, PushDiagnostics.Builder diagnostics) {
        Map<String, List<String>> reasons = new TreeMap<>();
        for (DocumentError e : store.unconverted()) {
            if (e.kind().equals("Ingress")) {
                reasons.computeIfAbsent(e.namespace() + "/" + e.name(), k -> new ArrayList<>()).add(e.reason());
            }
        }
        reasons.forEach((ingress, what) -> diagnostics.add(PushMetric.INGRESS_UNAPPLIED, ingress,
                "Ingress " + ingress + " not fully served: " + String.join("; ", what)));
    }

    /** Conflicting or unsupported config of this push (istiod's ProxyStatus); empty when none. */
    public PushDiagnostics diagnostics() {
        return diagnostics;
    }

    /**
     * istiod's {@code PushContext.AddMetric}: a problem a generator found while building one
     * proxy's config from this push, shown in push status until the next PushContext.
     */
    public void addMetric(PushMetric metric, String key, String proxy, String message) {
        records.add(metric, key, proxy, message);
    }

    /** What the generators recorded from this push so far (see {@link #addMetric}). */
    public PushRecords records() {
        return records;
    }

    /**
     * Config that proxyless gRPC proxies do not get: shown in push status (with the problems
     * of {@link #diagnostics()}) while such a proxy is connected.
     */
    public PushDiagnostics proxylessDiagnostics() {
        return proxylessDiagnostics;
    }

    /** VirtualServices by gateway, then resolved host, oldest first (for {@link ConfigConflicts}). */
    Map<String, Map<String, List<Config>>> virtualServiceIndex() {
        return virtualServicesByGateway;
    }

    /** Every AuthorizationPolicy, by namespace then oldest first (for {@link ConfigConflicts} and ztunnel's policies). */
    public List<Config> authorizationPolicyIndex() {
        return authorizationPolicies.keySet().stream().sorted().flatMap(ns -> authorizationPolicies.get(ns).stream())
                .toList();
    }

    /** DestinationRules by resolved host, oldest first (for {@link ConfigConflicts}). */
    Map<String, List<Config>> destinationRuleIndex() {
        return destinationRulesByHost;
    }

    /** Increases with every full push; the version proxies are sent. */
    public long version() {
        return version;
    }
}
