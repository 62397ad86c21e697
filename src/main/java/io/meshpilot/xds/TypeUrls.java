package io.meshpilot.xds;

/** The Envoy v3 resource type URLs, and the short names istiod uses in metrics. */
public final class TypeUrls {
    public static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
    public static final String ROUTE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    public static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    public static final String ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    /** SDS: TLS credentials for gateways ({@code kubernetes://<name>}), served by istiod's SecretGen. */
    public static final String SECRET = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";
    /**
     * ECDS: extension configs (WasmPlugins, EnvoyFilter EXTENSION_CONFIG patches) that listeners
     * reference by name, served by istiod's EcdsGenerator.
     */
    public static final String EXTENSION_CONFIG = "type.googleapis.com/envoy.config.core.v3.TypedExtensionConfig";
    /**
     * ztunnel's L4 policies ({@code istio.security.Authorization}, istiod's WorkloadAuthorizationType),
     * served to ztunnel nodes by {@link WorkloadRbacGenerator}.
     */
    public static final String WORKLOAD_AUTHORIZATION = "type.googleapis.com/istio.security.Authorization";
    /** ztunnel's workloads and services (istiod's AddressType), delta only: {@link AddressGenerator}. */
    public static final String ADDRESS = "type.googleapis.com/istio.workload.Address";
    /** istiod's debug type: the sync state of every connected proxy, as envoy.service.status.v3.ClientConfig. */
    public static final String DEBUG_SYNCZ = "istio.io/debug/syncz";
    /** istiod's debug type: one connected proxy's config dump, named by the one resource name. */
    public static final String DEBUG_CONFIG_DUMP = "istio.io/debug/config_dump";
    /** istiod's generic debug type: the body of the debug page the one resource name names ({@link DebugPageGenerator}). */
    public static final String DEBUG_PAGE = "istio.io/debug";
    /** The Istio agent's workload health reports: not a subscription (istiod's processRequest takes them first). */
    static final String HEALTH_INFO = "type.googleapis.com/istio.v1.HealthInformation";
    /** What istio.io/debug/syncz answers with: a proxy's sync state. */
    static final String CLIENT_CONFIG = "type.googleapis.com/envoy.service.status.v3.ClientConfig";
    /** What every debug type URL starts with (istiod's v3.DebugType). */
    static final String DEBUG_PREFIX = DEBUG_PAGE;

    private TypeUrls() {
    }

    /** istiod's debug types: answered on request, whatever the nonce, and never watched. */
    static boolean isDebug(String typeUrl) {
        return typeUrl.startsWith(DEBUG_PREFIX);
    }

    /**
     * Whether a subscription to the type may be a wildcard (istiod's IsWildcardTypeURL): LDS,
     * CDS and every type but SDS, EDS, RDS and ECDS. For those four, a request naming nothing
     * unsubscribes; any other type's request naming nothing asks for everything.
     */
    static boolean wildcardType(String typeUrl) {
        return switch (typeUrl) {
            case SECRET, ENDPOINT, ROUTE, EXTENSION_CONFIG -> false;
            default -> true;
        };
    }

    /** Label value for a type URL outside {@link #metricType}'s fixed set. */
    public static final String UNKNOWN_METRIC_TYPE = "unknown";

    /**
     * Value of the {@code type} label of the xDS metrics: istiod's name for each type it
     * knows (v3.GetMetricType), the served debug type as itself, and {@link
     * #UNKNOWN_METRIC_TYPE} for anything else. Type URLs come from clients on an
     * unauthenticated port, so they must not become label values (each would be a new
     * series, kept for good).
     */
    public static String metricType(String typeUrl) {
        return switch (typeUrl) {
            case LISTENER -> "lds";
            case ROUTE -> "rds";
            case CLUSTER -> "cds";
            case ENDPOINT -> "eds";
            case SECRET -> "sds";
            case "type.googleapis.com/istio.networking.nds.v1.NameTable" -> "nds";
            case "type.googleapis.com/istio.mesh.v1alpha1.ProxyConfig" -> "pcds";
            case EXTENSION_CONFIG -> "ecds";
            case "type.googleapis.com/envoy.config.bootstrap.v3.Bootstrap" -> "bds";
            case HEALTH_INFO -> "hds";
            case WORKLOAD_AUTHORIZATION -> "wads";
            case ADDRESS -> "wds";
            case DEBUG_SYNCZ, DEBUG_CONFIG_DUMP, DEBUG_PAGE -> typeUrl;
            default -> UNKNOWN_METRIC_TYPE;
        };
    }

    /**
     * Value of the {@code type} label of {@code pilot_xds_config_size_bytes}: istiod labels that
     * one with the type URL itself (xdsgen.go pushXds and delta.go pushDeltaXds record
     * {@code configSizeBytes} with {@code w.TypeUrl}), here kept to the types {@link #metricType}
     * knows.
     */
    public static String configSizeType(String typeUrl) {
        return metricType(typeUrl).equals(UNKNOWN_METRIC_TYPE) ? UNKNOWN_METRIC_TYPE : typeUrl;
    }

    /** lds, rds, cds, eds, sds, wads (istiod's names, for logs and debug output); the URL itself for other types. */
    public static String shortName(String typeUrl) {
        return switch (typeUrl) {
            case LISTENER -> "lds";
            case ROUTE -> "rds";
            case CLUSTER -> "cds";
            case ENDPOINT -> "eds";
            case SECRET -> "sds";
            case EXTENSION_CONFIG -> "ecds";
            case WORKLOAD_AUTHORIZATION -> "wads";
            case ADDRESS -> "wds";
            default -> typeUrl;
        };
    }
}
