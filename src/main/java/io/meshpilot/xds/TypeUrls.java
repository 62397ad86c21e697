package io.meshpilot.xds;

/** The Envoy v3 resource type URLs, and the short names istiod uses in metrics. */
public final class TypeUrls {
    public static final String LISTENER = "type.googleapis.com/envoy.config.listener.v3.Listener";
    public static final String ROUTE = "type.googleapis.com/envoy.config.route.v3.RouteConfiguration";
    public static final String CLUSTER = "type.googleapis.com/envoy.config.cluster.v3.Cluster";
    public static final String ENDPOINT = "type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment";
    /** SDS: TLS credentials for gateways ({@code kubernetes://<name>}), served by istiod's SecretGen. */
    public static final String SECRET = "type.googleapis.com/envoy.extensions.transport_sockets.tls.v3.Secret";
    /** istiod's debug type: the sync state of every connected proxy, as envoy.service.status.v3.ClientConfig. */
    public static final String DEBUG_SYNCZ = "istio.io/debug/syncz";

    private TypeUrls() {
    }

    /** lds, rds, cds, eds, sds (istiod's metric labels); the URL itself for other types. */
    public static String shortName(String typeUrl) {
        return switch (typeUrl) {
            case LISTENER -> "lds";
            case ROUTE -> "rds";
            case CLUSTER -> "cds";
            case ENDPOINT -> "eds";
            case SECRET -> "sds";
            default -> typeUrl;
        };
    }
}
