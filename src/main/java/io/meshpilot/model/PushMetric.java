package io.meshpilot.model;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A kind of problem a push records (istiod's push-status metrics): its name is both the key
 * of {@code ProxyStatus} in {@code /debug/push_status} and a Prometheus gauge set to the
 * number of entries in the PushContext in force. Every metric made with {@link #of} is
 * exported (0 while a push has none), as istiod exports its list of push metrics.
 *
 * @param name istiod's metric name where istiod has one
 * @param help the gauge's help text
 */
public record PushMetric(String name, String help) {
    private static final Map<String, PushMetric> KNOWN = new ConcurrentHashMap<>();

    /** istiod's DuplicatedDomains: for sidecars only the oldest VirtualService of a host applies. */
    public static final PushMetric DUPLICATED_DOMAINS = of("pilot_vservice_dup_domain",
            "Virtual services with dup domains.");
    /** istiod's DuplicatedSubsets: the first DestinationRule defining a subset of a host wins. */
    public static final PushMetric DUPLICATED_SUBSETS = of("pilot_destrule_subsets",
            "Duplicate subsets across destination rules for same host");
    /**
     * istiod's ProxyStatusNoService: a connected sidecar that no service's endpoint table lists
     * by its IP (normal for a client-only workload; otherwise its endpoints were not seen yet).
     * Keyed by proxy id. istiod declares it beside its GetProxyServiceTargets; recorded here
     * where our service targets are worked out ({@code InboundPorts}).
     */
    public static final PushMetric NO_IP = of("pilot_no_ip", "Pods not found in the endpoint table, possibly invalid.");
    /** istiod's ProxyStatusEndpointNotReady: a sidecar whose own endpoint is unready. Keyed by proxy id. */
    public static final PushMetric ENDPOINT_NOT_READY = of("pilot_endpoint_not_ready", "Endpoint found in unready state.");
    /** istiod's ProxyStatusClusterNoInstances: an EDS cluster whose assignment has no endpoints. Keyed by cluster. */
    public static final PushMetric EDS_NO_INSTANCES = of("pilot_eds_no_instances", "Number of clusters without instances.");
    /**
     * istiod's DuplicatedClusters: two services of one hostname (e.g. ServiceEntries of the same
     * host in two namespaces) make clusters of one name; the first is kept. Keyed by cluster.
     */
    public static final PushMetric DUPLICATED_CLUSTERS = of("pilot_duplicate_envoy_clusters",
            "Duplicate envoy clusters caused by service entries with same hostname");
    /** istiod's DNSNoEndpointClusters: a STRICT_DNS/LOGICAL_DNS cluster with no endpoint. Keyed by cluster. */
    public static final PushMetric DNS_NO_ENDPOINT_CLUSTERS = of("pilot_dns_cluster_without_endpoints",
            "DNS clusters without endpoints caused by the endpoint field in STRICT_DNS type cluster is not set or the "
                    + "corresponding subset cannot select any endpoint");
    /** istiod's ProxyStatusConflictOutboundListenerTCPOverTCP: a TCP service loses its port's listener to another. Keyed by listener. */
    public static final PushMetric CONFLICT_OUTBOUND_TCP_OVER_TCP = of("pilot_conflict_outbound_listener_tcp_over_current_tcp",
            "Number of conflicting tcp listeners with current tcp listener.");
    /** istiod's ProxyStatusConflictInboundListener: two services of other protocols target one workload port. Keyed by proxy id. */
    public static final PushMetric CONFLICT_INBOUND_LISTENER = of("pilot_conflict_inbound_listener",
            "Number of conflicting inbound listeners.");

    /**
     * Ours (istiod has no gauge for it): a route destination names a subset that the host's
     * DestinationRule, as seen from the VirtualService's namespace, does not define. The
     * route is still sent to {@code outbound|port|subset|host}; that cluster does not
     * exist, so Envoy answers 503 (NC) on that route, as with istiod.
     */
    public static final PushMetric UNDEFINED_SUBSETS = of("pilot_vservice_undefined_subset",
            "Virtual service route destinations whose subset no destination rule defines.");

    /**
     * Ours: a CUSTOM AuthorizationPolicy names a provider that meshConfig's extensionProviders
     * does not define as envoyExtAuthzHttp or envoyExtAuthzGrpc. As istiod, the requests the
     * policy matches are denied (its rules become DENY rules) instead of being sent for checking.
     */
    public static final PushMetric AUTHZ_CUSTOM_PROVIDER_UNKNOWN = of("pilot_authz_custom_provider_unknown",
            "CUSTOM authorization policies whose provider is no ext_authz extension provider.");
    /**
     * Ours: an AuthorizationPolicy with {@code targetRef(s)} that names nothing MeshPilot
     * serves (Kubernetes Gateways, by their deployment's gateway-name label, are attachable, and
     * with ambient waypoints a Service, ServiceEntry or the {@code istio-waypoint} class): it
     * applies to no proxy, as for istiod's sidecars.
     */
    public static final PushMetric AUTHZ_TARGET_UNSUPPORTED = of("pilot_authz_target_unsupported",
            "Authorization policies whose targetRefs attach them to no proxy MeshPilot serves.");

    /**
     * Ours (istiod writes the same message into the policy's {@code ZtunnelAccepted} condition):
     * an AuthorizationPolicy ztunnel does not get as written: HTTP attributes left out, an AUDIT
     * or CUSTOM action, dry run while AMBIENT_ENABLE_DRY_RUN_AUTHORIZATION_POLICY is off. Listed
     * once a ztunnel was served from the push. Keyed {@code namespace/name}.
     */
    public static final PushMetric AUTHZ_ZTUNNEL_UNAPPLIED = of("pilot_authz_ztunnel_unapplied",
            "Authorization policies ztunnel does not enforce as written.");

    /**
     * Ours: Sidecar fields MeshPilot accepts but does not apply to the Envoy config (egress
     * port, bind and captureMode; ingress bind, captureMode, tls and connectionPool;
     * inboundConnectionPool). Keyed {@code namespace/name|field path}.
     */
    public static final PushMetric SIDECAR_UNAPPLIED = of("pilot_sidecar_unapplied",
            "Sidecar fields that are accepted but not applied to the generated Envoy config.");
    /**
     * Ours: DestinationRule traffic-policy fields not translated into Envoy clusters or routes
     * (consistent-hash keys, locality load balancing, warmup, PASSTHROUGH, tunnel, PROXY
     * protocol, retry budget, useClientProtocol, caCrl). Keyed {@code namespace/name|field path}.
     */
    public static final PushMetric DESTRULE_UNAPPLIED = of("pilot_destrule_unapplied",
            "Destination rule fields that are accepted but not applied to the generated Envoy config.");
    /** Ours: Gateway server fields not applied to the gateway's listeners (tls.caCrl). */
    public static final PushMetric GATEWAY_UNAPPLIED = of("pilot_gateway_unapplied",
            "Gateway fields that are accepted but not applied to the generated Envoy config.");
    /** Ours: ServiceEntry subjectAltNames, which Istio mutual TLS to its endpoints does not verify. */
    public static final PushMetric SERVICEENTRY_UNAPPLIED = of("pilot_serviceentry_unapplied",
            "Service entry fields that are accepted but not applied to the generated Envoy config.");
    /** Ours: ProxyConfig objects; they act through the injector and agent, which MeshPilot does not run. */
    public static final PushMetric PROXYCONFIG_UNAPPLIED = of("pilot_proxyconfig_unapplied",
            "ProxyConfig objects, which no proxy receives from MeshPilot.");
    /** Ours: WorkloadGroup objects; VM auto-registration is not supported. */
    public static final PushMetric WORKLOADGROUP_UNAPPLIED = of("pilot_workloadgroup_unapplied",
            "WorkloadGroup objects, which MeshPilot does not apply (no auto-registration).");
    /**
     * Ours: PeerAuthentications that istiod's composition leaves out (a selector policy in the
     * root namespace; a namespace- or mesh-wide policy that is not the oldest of its namespace).
     */
    public static final PushMetric PEERAUTHN_IGNORED = of("pilot_peerauthn_ignored",
            "Peer authentication policies that apply to no workload.");
    /**
     * Ours: Kubernetes Ingresses served in part (a backend Service that does not exist, a port
     * name it lacks, a TLS section without a Secret, ...). Keyed {@code namespace/name}.
     */
    public static final PushMetric INGRESS_UNAPPLIED = of("pilot_ingress_unapplied",
            "Kubernetes Ingresses whose parts could not be converted into the gateway's config.");
    /**
     * Ours: config that proxyless gRPC clients and servers do not get (route features beyond
     * uri/header matches, weights, timeout, retries and fault; DestinationRule fields beyond
     * the load balancer; mTLS and JWT on their inbound listeners). Listed while a proxyless
     * gRPC proxy is connected. Keyed {@code Kind/namespace/name|field path}.
     */
    public static final PushMetric GRPC_UNAPPLIED = of("pilot_grpc_unapplied",
            "Config fields that are not applied to the connected proxyless gRPC clients and servers.");

    public PushMetric {
        if (!name.matches("[a-zA-Z_:][a-zA-Z0-9_:]*")) {
            throw new IllegalArgumentException("not a Prometheus metric name: " + name);
        }
    }

    /** The metric {@code name}, declared once (the same instance for the same name). */
    public static PushMetric of(String name, String help) {
        return KNOWN.computeIfAbsent(name, n -> new PushMetric(n, help));
    }

    /** Every metric declared so far, by name. */
    public static List<PushMetric> known() {
        return KNOWN.values().stream().sorted(Comparator.comparing(PushMetric::name)).toList();
    }
}
