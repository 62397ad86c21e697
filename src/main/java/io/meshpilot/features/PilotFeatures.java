package io.meshpilot.features;

import com.sun.management.HotSpotDiagnosticMXBean;
import io.meshpilot.util.GoDuration;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Tunables istiod reads from environment variables, with istiod's defaults. Read once at
 * start-up; a malformed value fails start-up naming the variable.
 *
 * @param debounceAfter        PILOT_DEBOUNCE_AFTER: quiet time before a push starts
 * @param debounceMax          PILOT_DEBOUNCE_MAX: longest a push is delayed by debouncing
 * @param enableEdsDebounce    PILOT_ENABLE_EDS_DEBOUNCE: endpoint updates are debounced too
 * @param pushThrottle         PILOT_PUSH_THROTTLE: concurrent pushes (0 in the env = auto)
 * @param maxRequestsPerSecond PILOT_MAX_REQUESTS_PER_SECOND: new xDS streams per second (0 = auto)
 * @param rootCaDir            ROOT_CA_DIR: plugged-in CA files
 * @param jwtRule              JWT_RULE: OIDC authenticator rule (JSON), empty when unset
 * @param xdsAuth              XDS_AUTH: authenticate xDS callers on the secure port
 * @param defaultWorkloadCertTtl DEFAULT_WORKLOAD_CERT_TTL
 * @param maxWorkloadCertTtl   MAX_WORKLOAD_CERT_TTL
 * @param enableDebugOnHttp    ENABLE_DEBUG_ON_HTTP: serve /debug/* at all
 * @param enableXdsCache       PILOT_ENABLE_XDS_CACHE: share generated resources across proxies
 * @param xdsCacheSize         PILOT_XDS_CACHE_SIZE (60000): endpoint assignments the cache keeps at most
 * @param ca                   the self-signed CA's CITADEL_* settings and ISTIOD_CUSTOM_HOST
 * @param registry             how the service registries select and report endpoints
 * @param enhancedResourceScoping ENABLE_ENHANCED_RESOURCE_SCOPING (true, istiod 1.22 on; always on
 *                             since it was removed in 1.25): meshConfig.discoverySelectors limit
 *                             the Istio config read from CRDs too, not only the services
 * @param kubeAuth             how Kubernetes service-account tokens are reviewed (Kubernetes mode)
 * @param ra                   RA mode: EXTERNAL_CA, K8S_SIGNER, PILOT_CERT_PROVIDER
 * @param prioritizedLeaderElection PRIORITIZED_LEADER_ELECTION (true): the default revision takes the
 *                             leader elections over from other revisions
 * @param status               config status written back to the cluster: PILOT_ENABLE_STATUS,
 *                             PILOT_ENABLE_ANALYSIS, PILOT_STATUS_UPDATE_INTERVAL
 * @param nativeSidecars       ENABLE_NATIVE_SIDECARS (auto): the injected istio-proxy is a Kubernetes native
 *                             sidecar. Only {@code true} turns it on: istiod's {@code auto} reads the nodes'
 *                             kubelet versions, which MeshPilot does not watch, so {@code auto} means off (what
 *                             istiod does without a node client)
 * @param debugAuth            who may read /debug/* from off the machine
 * @param ingressNamespace     K8S_INGRESS_NS (istio-system): where the Gateways converted from Kubernetes
 *                             Ingresses live and where the ingress Service is looked up
 * @param xdsSend              how much the xDS server hands the gRPC transport before it waits, and how
 *                             long a stream may stay unwritable
 * @param metadataExchange     PILOT_ENABLE_METADATA_EXCHANGE, PILOT_MX_ADDITIONAL_LABELS, PILOT_ENABLE_ALPN_FILTER,
 *                             PILOT_DISABLE_MX_ALPN: istio-proxy's metadata-exchange filters and ALPN
 * @param traceSampling        PILOT_TRACE_SAMPLING (1.0): tracing's sampling percentage where the ProxyConfig sets none
 * @param gatewayApi           the Kubernetes Gateway API switches and names (PILOT_ENABLE_GATEWAY_API and its kin)
 * @param ambient              ambient mode's switches (PILOT_ENABLE_AMBIENT and its kin)
 */
public record PilotFeatures(
        Duration debounceAfter,
        Duration debounceMax,
        boolean enableEdsDebounce,
        int pushThrottle,
        double maxRequestsPerSecond,
        String rootCaDir,
        String jwtRule,
        boolean xdsAuth,
        Duration defaultWorkloadCertTtl,
        Duration maxWorkloadCertTtl,
        boolean enableDebugOnHttp,
        boolean enableXdsCache,
        int xdsCacheSize,
        Ca ca,
        Registry registry,
        boolean enhancedResourceScoping,
        KubeAuth kubeAuth,
        Ra ra,
        boolean prioritizedLeaderElection,
        Status status,
        boolean nativeSidecars,
        DebugAuth debugAuth,
        String ingressNamespace,
        XdsSend xdsSend,
        MetadataExchange metadataExchange,
        TraceSampling traceSampling,
        GatewayApi gatewayApi,
        Ambient ambient) {

    /**
     * istiod's ambient switches (pilot/pkg/features/ambient.go). The ones istiod registers only
     * with ambient on ({@code registerAmbient}) take their ambient default when PILOT_ENABLE_AMBIENT
     * is true and are false otherwise, whatever the environment says, as istiod.
     *
     * @param enabled   PILOT_ENABLE_AMBIENT (false): ztunnel's Address and Authorization types, the ambient index
     * @param waypoints PILOT_ENABLE_AMBIENT_WAYPOINTS (true with ambient): the {@code istio-waypoint} class and
     *                  waypoint proxies' config
     * @param status    AMBIENT_ENABLE_STATUS (true with ambient): status conditions about ambient on Services and
     *                  policies
     * @param dryRunAuthorizationPolicies AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY (false): AuthorizationPolicies
     *                  annotated {@code istio.io/dry-run} reach ztunnel marked dry run; off, they are not sent
     *                  (ztunnel before 1.29 would enforce them)
     * @param hboneSend PILOT_ENABLE_SENDING_HBONE (true with ambient): sidecars and gateways reach workloads that take
     *                  HBONE (pods ztunnel captures, waypoints) through {@code connect_originate}
     * @param preferHboneSend PILOT_PREFER_SENDING_HBONE (false): HBONE also to workloads that have a sidecar
     * @param ingressWaypointRouting ENABLE_INGRESS_WAYPOINT_ROUTING (true with ambient): gateways send to the waypoint
     *                  of a service labelled {@code istio.io/ingress-use-waypoint}
     * @param allowFromWaypoint PILOT_AUTO_ALLOW_WAYPOINT_POLICY (false): ztunnel gets an implicit ALLOW policy
     *                  for each waypoint's identities, named by the workloads that use it
     */
    public record Ambient(boolean enabled, boolean waypoints, boolean status, boolean dryRunAuthorizationPolicies,
                          boolean hboneSend, boolean preferHboneSend, boolean ingressWaypointRouting,
                          boolean allowFromWaypoint) {
        public static final Ambient OFF = new Ambient(false, false, false, false, false, false, false, false);

        /** As {@link #Ambient(boolean, boolean, boolean, boolean, boolean)}, without the implicit waypoint policy. */
        public Ambient(boolean enabled, boolean waypoints, boolean status, boolean dryRunAuthorizationPolicies) {
            this(enabled, waypoints, status, dryRunAuthorizationPolicies, false);
        }

        /** With HBONE sending as ambient mode defaults it: on when ambient is, not preferred. */
        public Ambient(boolean enabled, boolean waypoints, boolean status, boolean dryRunAuthorizationPolicies,
                       boolean allowFromWaypoint) {
            this(enabled, waypoints, status, dryRunAuthorizationPolicies, enabled, false, enabled, allowFromWaypoint);
        }
    }

    /**
     * istiod's Kubernetes Gateway API settings (pilot/pkg/features/experimental.go, pilot.go).
     *
     * @param enabled                PILOT_ENABLE_GATEWAY_API (true): the Gateway API objects are read and converted
     * @param status                 PILOT_ENABLE_GATEWAY_API_STATUS (true): their status is written (by the
     *                               status leader)
     * @param deploymentController   PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER (true): Gateways of a managed
     *                               class get their Deployment, Service and ServiceAccount
     * @param gatewayClassController PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER (true): the built-in
     *                               GatewayClasses are created when missing
     * @param copyLabelsAnnotations  PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS (true): a Gateway's labels and
     *                               annotations go onto its generated resources when it sets no
     *                               {@code spec.infrastructure}
     * @param alphaApis              PILOT_ENABLE_ALPHA_GATEWAY_API (false): XBackend and XBackendTrafficPolicy
     *                               (not converted by MeshPilot: warned about when on)
     * @param inferenceExtension     ENABLE_GATEWAY_API_INFERENCE_EXTENSION (false): InferencePool backends (not
     *                               converted by MeshPilot: warned about when on)
     * @param manualDeployment       ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT (true): a Gateway may bind to an existing
     *                               deployment through its addresses
     * @param defaultGatewayClass    PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME (istio)
     * @param controllerName         PILOT_GATEWAY_API_CONTROLLER_NAME (istio.io/gateway-controller): the
     *                               controller of that class, and the {@code controllerName} of route status
     * @param multiNetwork           PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API (true): the {@code istio-remote} class
     * @param strictGatewayMerging   PILOT_ENABLE_STRICT_GATEWAY_MERGING (true): a managed Gateway API gateway is
     *                               not merged with Istio Gateways of other namespaces
     */
    public record GatewayApi(boolean enabled, boolean status, boolean deploymentController,
                             boolean gatewayClassController, boolean copyLabelsAnnotations, boolean alphaApis,
                             boolean inferenceExtension, boolean manualDeployment, String defaultGatewayClass,
                             String controllerName, boolean multiNetwork, boolean strictGatewayMerging) {
        /** One start-up warning per switch that asks for an API MeshPilot does not convert. */
        public List<String> warnings() {
            List<String> out = new ArrayList<>();
            if (alphaApis) {
                out.add("PILOT_ENABLE_ALPHA_GATEWAY_API=true: XBackend and XBackendTrafficPolicy are not converted by "
                        + "MeshPilot; routes naming them get istiod's InvalidKind status");
            }
            if (inferenceExtension) {
                out.add("ENABLE_GATEWAY_API_INFERENCE_EXTENSION=true: InferencePool backends are not converted by "
                        + "MeshPilot; routes naming them get istiod's InvalidKind status");
            }
            return List.copyOf(out);
        }
    }

    /**
     * Backpressure on xDS responses: a stream's response waits for the budget instead of
     * piling up in the transport's (direct-memory) buffers.
     *
     * @param bytesInFlight MESHPILOT_XDS_BYTES_IN_FLIGHT (ours; unset or 0: a quarter of the JVM's
     *                      maximum direct memory, which grpc-java's Netty allocates from): response
     *                      bytes of all streams handed to the transport and not yet taken by the socket
     * @param sendTimeout   PILOT_XDS_SEND_TIMEOUT (istiod 1.8 to 1.21 read it, 5s then 0s; istiod 1.22
     *                      removed it and never times a send out; 30s here, 0 never): how long a stream
     *                      may stay unwritable before it is ended with DEADLINE_EXCEEDED
     */
    public record XdsSend(long bytesInFlight, Duration sendTimeout) {
        /** The default budget is never less than this: a JVM with little direct memory still writes. */
        static final long MIN_BYTES_IN_FLIGHT = 16L * 1024 * 1024;

        public XdsSend {
            if (bytesInFlight <= 0) {
                throw new IllegalArgumentException("the xDS send budget must be more than 0 bytes, was " + bytesInFlight);
            }
        }

        /** A quarter of the maximum direct memory (-XX:MaxDirectMemorySize, or the maximum heap when unset). */
        static long defaultBytesInFlight() {
            long max = Runtime.getRuntime().maxMemory();
            HotSpotDiagnosticMXBean hotspot = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
            if (hotspot != null) {
                long set = Long.parseLong(hotspot.getVMOption("MaxDirectMemorySize").getValue());
                if (set > 0) {
                    max = set;
                }
            }
            return Math.max(MIN_BYTES_IN_FLIGHT, max / 4);
        }
    }

    /**
     * istiod's config status switches (Kubernetes mode; the status leader writes).
     *
     * @param reconciled     PILOT_ENABLE_STATUS (false): the {@code Reconciled} condition and
     *                       {@code observedGeneration} of every Istio object
     * @param analysis       PILOT_ENABLE_ANALYSIS (false): validation warnings as {@code validationMessages}
     * @param updateInterval PILOT_STATUS_UPDATE_INTERVAL (500ms): status is written at most this often
     */
    public record Status(boolean reconciled, boolean analysis, Duration updateInterval) {
        public Status {
            if (updateInterval.isZero()) {
                throw new IllegalArgumentException("PILOT_STATUS_UPDATE_INTERVAL must be more than 0");
            }
        }

        /** Whether anything is written at all. */
        public boolean enabled() {
            return reconciled || analysis;
        }
    }

    /**
     * istiod's debug endpoint authorization for authenticated callers that are not local.
     *
     * @param enforce           ENABLE_DEBUG_ENDPOINT_AUTH (true): only the system namespace and
     *                          {@code allowedNamespaces} read everything; other namespaces read
     *                          config_dump, ndsz and edsz of their own proxies. False: any
     *                          authenticated caller reads everything.
     * @param allowedNamespaces DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES (comma separated): namespaces
     *                          treated as the system namespace
     */
    public record DebugAuth(boolean enforce, Set<String> allowedNamespaces) {
        public static final DebugAuth DEFAULTS = new DebugAuth(true, Set.of());

        public DebugAuth {
            allowedNamespaces = Set.copyOf(allowedNamespaces);
        }

        static DebugAuth parse(boolean enforce, String namespaces) {
            return new DebugAuth(enforce, Arrays.stream(namespaces.split(","))
                    .map(String::trim).filter(n -> !n.isEmpty()).collect(Collectors.toSet()));
        }
    }

    /**
     * istiod's Kubernetes token authentication settings.
     *
     * @param jwtPolicy           JWT_POLICY (third-party-jwt): the audience a TokenReview asks for
     * @param trustedNodeAccounts CA_TRUSTED_NODE_ACCOUNTS (empty): node agents that may impersonate
     */
    public record KubeAuth(JwtPolicy jwtPolicy,
                           TrustedNodeAccounts trustedNodeAccounts) {
        public static final KubeAuth DEFAULTS = new KubeAuth(JwtPolicy.THIRD_PARTY,
                TrustedNodeAccounts.NONE);
    }

    /**
     * istiod's RA mode settings.
     *
     * @param externalCa  EXTERNAL_CA: empty (MeshPilot signs) or ISTIOD_RA_KUBERNETES_API
     * @param k8sSigner   K8S_SIGNER: the signerName of the CertificateSigningRequests
     * @param signTimeout MESHPILOT_RA_SIGN_TIMEOUT (10s, about istiod's fixed watch-then-poll
     *                    wait): how long a CreateCertificate waits for the signer
     * @param certProvider PILOT_CERT_PROVIDER (istiod): who signs istiod's own certificate,
     *                    {@code istiod} (its CA) or {@code k8s.io/<signer>} (RA mode: that signer,
     *                    whose MeshConfig root is then the one published)
     */
    public record Ra(String externalCa, String k8sSigner, Duration signTimeout, String certProvider) {
        public static final String KUBERNETES_API = "ISTIOD_RA_KUBERNETES_API";
        public static final String ISTIOD_PROVIDER = "istiod";
        static final String SIGNER_PREFIX = "k8s.io/";

        public Ra {
            if (!externalCa.isEmpty() && !externalCa.equals(KUBERNETES_API)) {
                throw new IllegalArgumentException("EXTERNAL_CA=\"" + externalCa + "\": the only external CA supported is "
                        + KUBERNETES_API);
            }
            if (!certProvider.equals(ISTIOD_PROVIDER)
                    && !(certProvider.startsWith(SIGNER_PREFIX) && certProvider.length() > SIGNER_PREFIX.length())) {
                throw new IllegalArgumentException("PILOT_CERT_PROVIDER=\"" + certProvider + "\": supported are "
                        + ISTIOD_PROVIDER + " and " + SIGNER_PREFIX + "<signerName> (with EXTERNAL_CA=" + KUBERNETES_API + ")");
            }
        }

        /** The signer of istiod's own certificate under PILOT_CERT_PROVIDER=k8s.io/&lt;signer&gt;. */
        public Optional<String> servingSigner() {
            return certProvider.startsWith(SIGNER_PREFIX)
                    ? Optional.of(certProvider.substring(SIGNER_PREFIX.length()))
                    : Optional.empty();
        }

        /** True when CSRs go to the Kubernetes CSR API instead of MeshPilot's CA. */
        public boolean kubernetesApi() {
            return externalCa.equals(KUBERNETES_API);
        }
    }

    /**
     * istiod's registry switches.
     *
     * @param sendUnhealthyEndpoints        PILOT_SEND_UNHEALTHY_ENDPOINTS (false): endpoints that are not
     *                                      ready go to proxies too, marked unhealthy, instead of being left out
     * @param serviceEntrySelectPods        PILOT_ENABLE_SERVICEENTRY_SELECT_PODS (true): a ServiceEntry's
     *                                      workloadSelector selects Kubernetes pods as well as WorkloadEntries
     * @param k8sServiceSelectWorkloadEntries PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES (true): a Kubernetes
     *                                      Service's selector selects WorkloadEntries as well as pods
     * @param remoteClusterTimeout          PILOT_REMOTE_CLUSTER_TIMEOUT (30s): after this a remote cluster
     *                                      (from a remote Secret) that has not synced stops holding back
     *                                      readiness; 0 waits for it
     */
    public record Registry(boolean sendUnhealthyEndpoints, boolean serviceEntrySelectPods,
                           boolean k8sServiceSelectWorkloadEntries, Duration remoteClusterTimeout) {
        /** istiod's PILOT_REMOTE_CLUSTER_TIMEOUT default. */
        public static final Duration REMOTE_CLUSTER_TIMEOUT = Duration.ofSeconds(30);
        /** istiod's defaults. */
        public static final Registry DEFAULTS = new Registry(false, true, true);

        public Registry(boolean sendUnhealthyEndpoints, boolean serviceEntrySelectPods,
                        boolean k8sServiceSelectWorkloadEntries) {
            this(sendUnhealthyEndpoints, serviceEntrySelectPods, k8sServiceSelectWorkloadEntries, REMOTE_CLUSTER_TIMEOUT);
        }
    }

    /**
     * istiod's CA settings.
     *
     * @param server             ENABLE_CA_SERVER (true): false creates no CA at all (istiod's
     *                           maybeCreateCA), for istio-csr / cert-manager; istiod's certificate
     *                           must then come from files
     * @param rsaKeySize         CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE (2048)
     * @param selfSignedTtl      CITADEL_SELF_SIGNED_CA_CERT_TTL (87600h, ten years)
     * @param rootCheckInterval  CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL (1h)
     * @param gracePercentile    CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE (20): rotate the
     *                           root when less than this share of its life is left
     * @param customHosts        ISTIOD_CUSTOM_HOST: extra DNS names for istiod's certificate
     * @param secretTimeout      MESHPILOT_CA_SECRET_TIMEOUT (20m, istiod's fixed wait): how long
     *                           start-up in Kubernetes mode keeps asking for istiod's CA Secrets
     *                           before the CA fails
     */
    public record Ca(boolean server, int rsaKeySize, Duration selfSignedTtl, Duration rootCheckInterval, int gracePercentile,
                     List<String> customHosts, Duration secretTimeout) {
        public Ca {
            customHosts = List.copyOf(customHosts);
        }
    }

    /** istiod's auto value for both throttles: 15 + 5 per CPU, at most 100. */
    static int autoThrottle() {
        return Math.min(15 + 5 * Runtime.getRuntime().availableProcessors(), 100);
    }

    public static PilotFeatures fromEnv(Function<String, String> env) {
        EnvReader r = new EnvReader(env);
        int throttle = r.integer("PILOT_PUSH_THROTTLE", 0);
        double rps = r.decimal("PILOT_MAX_REQUESTS_PER_SECOND", 0.0);
        return new PilotFeatures(
                r.duration("PILOT_DEBOUNCE_AFTER", "100ms"),
                r.duration("PILOT_DEBOUNCE_MAX", "10s"),
                r.bool("PILOT_ENABLE_EDS_DEBOUNCE", true),
                throttle > 0 ? throttle : autoThrottle(),
                rps > 0 ? rps : autoThrottle(),
                r.string("ROOT_CA_DIR", "./etc/cacerts"),
                r.string("JWT_RULE", ""),
                r.bool("XDS_AUTH", true),
                r.duration("DEFAULT_WORKLOAD_CERT_TTL", "24h"),
                r.duration("MAX_WORKLOAD_CERT_TTL", "2160h"),
                r.bool("ENABLE_DEBUG_ON_HTTP", true),
                r.bool("PILOT_ENABLE_XDS_CACHE", true),
                r.integer("PILOT_XDS_CACHE_SIZE", 60_000),
                new Ca(r.bool("ENABLE_CA_SERVER", true), rsaKeySize(r), r.duration("CITADEL_SELF_SIGNED_CA_CERT_TTL", "87600h"),
                        r.duration("CITADEL_SELF_SIGNED_ROOT_CERT_CHECK_INTERVAL", "1h"),
                        percentile(r), Arrays.stream(r.string("ISTIOD_CUSTOM_HOST", "").split(","))
                                .map(String::trim).filter(h -> !h.isEmpty()).toList(),
                        r.duration("MESHPILOT_CA_SECRET_TIMEOUT", "20m")),
                new Registry(r.bool("PILOT_SEND_UNHEALTHY_ENDPOINTS", false),
                        r.bool("PILOT_ENABLE_SERVICEENTRY_SELECT_PODS", true),
                        r.bool("PILOT_ENABLE_K8S_SELECT_WORKLOAD_ENTRIES", true),
                        r.duration("PILOT_REMOTE_CLUSTER_TIMEOUT", "30s")),
                r.bool("ENABLE_ENHANCED_RESOURCE_SCOPING", true),
                new KubeAuth(JwtPolicy.fromEnv(r.string("JWT_POLICY", "third-party-jwt")),
                        TrustedNodeAccounts.parse(r.string("CA_TRUSTED_NODE_ACCOUNTS", ""))),
                new Ra(r.string("EXTERNAL_CA", "").trim(), r.string("K8S_SIGNER", "").trim(),
                        r.duration("MESHPILOT_RA_SIGN_TIMEOUT", "10s"),
                        r.string("PILOT_CERT_PROVIDER", Ra.ISTIOD_PROVIDER).trim()),
                r.bool("PRIORITIZED_LEADER_ELECTION", true),
                new Status(r.bool("PILOT_ENABLE_STATUS", false), r.bool("PILOT_ENABLE_ANALYSIS", false),
                        r.duration("PILOT_STATUS_UPDATE_INTERVAL", "500ms")),
                nativeSidecars(r),
                DebugAuth.parse(r.bool("ENABLE_DEBUG_ENDPOINT_AUTH", true),
                        r.string("DEBUG_ENDPOINT_AUTH_ALLOWED_NAMESPACES", "")),
                r.string("K8S_INGRESS_NS", "istio-system"),
                xdsSend(r),
                MetadataExchange.parse(r.bool("PILOT_ENABLE_METADATA_EXCHANGE", true),
                        r.string("PILOT_MX_ADDITIONAL_LABELS", ""), r.bool("PILOT_ENABLE_ALPN_FILTER", true),
                        r.bool("PILOT_DISABLE_MX_ALPN", false)),
                traceSampling(r),
                new GatewayApi(r.bool("PILOT_ENABLE_GATEWAY_API", true), r.bool("PILOT_ENABLE_GATEWAY_API_STATUS", true),
                        r.bool("PILOT_ENABLE_GATEWAY_API_DEPLOYMENT_CONTROLLER", true),
                        r.bool("PILOT_ENABLE_GATEWAY_API_GATEWAYCLASS_CONTROLLER", true),
                        r.bool("PILOT_ENABLE_GATEWAY_API_COPY_LABELS_ANNOTATIONS", true),
                        r.bool("PILOT_ENABLE_ALPHA_GATEWAY_API", false),
                        r.bool("ENABLE_GATEWAY_API_INFERENCE_EXTENSION", false),
                        r.bool("ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT", true),
                        r.string("PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME", "istio"),
                        r.string("PILOT_GATEWAY_API_CONTROLLER_NAME", "istio.io/gateway-controller"),
                        r.bool("PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API", true),
                        r.bool("PILOT_ENABLE_STRICT_GATEWAY_MERGING", true)),
                ambient(r));
    }

    private static Ambient ambient(EnvReader r) {
        if (!r.bool("PILOT_ENABLE_AMBIENT", false)) {
            return Ambient.OFF;
        }
        return new Ambient(true, r.bool("PILOT_ENABLE_AMBIENT_WAYPOINTS", true), r.bool("AMBIENT_ENABLE_STATUS", true),
                r.bool("AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY", false),
                r.bool("PILOT_ENABLE_SENDING_HBONE", true), r.bool("PILOT_PREFER_SENDING_HBONE", false),
                r.bool("ENABLE_INGRESS_WAYPOINT_ROUTING", true), r.bool("PILOT_AUTO_ALLOW_WAYPOINT_POLICY", false));
    }

    private static XdsSend xdsSend(EnvReader r) {
        long budget = r.bytes("MESHPILOT_XDS_BYTES_IN_FLIGHT", 0);
        return new XdsSend(budget > 0 ? budget : XdsSend.defaultBytesInFlight(), r.duration("PILOT_XDS_SEND_TIMEOUT", "30s"));
    }

    private static boolean nativeSidecars(EnvReader r) {
        String v = r.string("ENABLE_NATIVE_SIDECARS", "auto").trim();
        return switch (v) {
            case "true" -> true;
            case "false", "auto", "" -> false;
            default -> throw new IllegalArgumentException("ENABLE_NATIVE_SIDECARS=\"" + v + "\": expected true, false or auto");
        };
    }

    private static TraceSampling traceSampling(EnvReader r) {
        String v = r.env().apply("PILOT_TRACE_SAMPLING");
        return v == null || v.isBlank() ? TraceSampling.DEFAULT : TraceSampling.parse(v);
    }

    private static int rsaKeySize(EnvReader r) {
        int bits = r.integer("CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE", 2048);
        if (bits < 2048) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE=" + bits + ": must be at least 2048");
        }
        return bits;
    }

    private static int percentile(EnvReader r) {
        int p = r.integer("CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE", 20);
        if (p > 100) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_ROOT_CERT_GRACE_PERIOD_PERCENTILE=" + p
                    + ": must be between 0 and 100");
        }
        return p;
    }

    /** Typed env access; every parse error names the variable and the bad value. */
    record EnvReader(Function<String, String> env) {
        String string(String name, String dflt) {
            String v = env.apply(name);
            return v == null ? dflt : v;
        }

        Duration duration(String name, String dflt) {
            String v = string(name, dflt);
            try {
                Duration d = GoDuration.parse(v);
                if (d.isNegative()) {
                    throw new IllegalArgumentException("must not be negative");
                }
                return d;
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(name + "=\"" + v + "\": " + e.getMessage());
            }
        }

        boolean bool(String name, boolean dflt) {
            String v = env.apply(name);
            if (v == null || v.isBlank()) {
                return dflt;
            }
            return switch (v.trim().toLowerCase(Locale.ROOT)) {
                case "1", "t", "true" -> true;
                case "0", "f", "false" -> false;
                default -> throw new IllegalArgumentException(name + "=\"" + v + "\": expected true or false");
            };
        }

        int integer(String name, int dflt) {
            return (int) wholeNumber(name, dflt, Integer.MAX_VALUE, "a whole number >= 0");
        }

        long bytes(String name, long dflt) {
            return wholeNumber(name, dflt, Long.MAX_VALUE, "a whole number of bytes >= 0");
        }

        private long wholeNumber(String name, long dflt, long max, String expected) {
            String v = env.apply(name);
            if (v == null || v.isBlank()) {
                return dflt;
            }
            try {
                long n = Long.parseLong(v.trim());
                if (n < 0 || n > max) {
                    throw new NumberFormatException();
                }
                return n;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + "=\"" + v + "\": expected " + expected);
            }
        }

        double decimal(String name, double dflt) {
            String v = env.apply(name);
            if (v == null || v.isBlank()) {
                return dflt;
            }
            try {
                double d = Double.parseDouble(v.trim());
                if (d < 0 || Double.isNaN(d) || Double.isInfinite(d)) {
                    throw new NumberFormatException();
                }
                return d;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(name + "=\"" + v + "\": expected a number >= 0");
            }
        }
    }
}
