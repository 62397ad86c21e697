package io.meshpilot.config.kube.gateway;

import java.util.List;

/**
 * The Kubernetes Gateway API kinds istiod reads and the versions it reads them at
 * (istio/istio pkg/config/schema/gvr at 86c9f01: every kind at {@code v1} except ReferenceGrant
 * at {@code v1beta1}).
 */
public final class GatewayApiKinds {
    public static final String GROUP = "gateway.networking.k8s.io";
    public static final String GATEWAY_CLASS = "GatewayClass";
    public static final String GATEWAY = "Gateway";
    public static final String LISTENER_SET = "ListenerSet";
    public static final String HTTP_ROUTE = "HTTPRoute";
    public static final String GRPC_ROUTE = "GRPCRoute";
    public static final String TCP_ROUTE = "TCPRoute";
    public static final String TLS_ROUTE = "TLSRoute";
    public static final String REFERENCE_GRANT = "ReferenceGrant";
    public static final String BACKEND_TLS_POLICY = "BackendTLSPolicy";

    /** istiod's controller name for its classes (constants.ManagedGatewayController). */
    public static final String ISTIO_CONTROLLER = "istio.io/gateway-controller";
    /** istiod's controller of the waypoint class (constants.ManagedGatewayMeshController). */
    public static final String MESH_CONTROLLER = "istio.io/mesh-controller";
    /** istiod's waypoint class (constants.WaypointGatewayClassName), made with PILOT_ENABLE_AMBIENT_WAYPOINTS. */
    public static final String WAYPOINT_CLASS = "istio-waypoint";
    /** The route kinds, in the order istiod's status dump and conversion list them. */
    public static final List<String> ROUTE_KINDS = List.of(HTTP_ROUTE, GRPC_ROUTE, TLS_ROUTE, TCP_ROUTE);

    /**
     * One kind as istiod watches it (pkg/config/schema/gvr, pkg/config/schema/gatewayapi/minimumversions.go).
     *
     * @param version              the one version read
     * @param minimumBundleVersion the least {@code gateway.networking.k8s.io/bundle-version} of its CRD that is
     *                             read, {@code major.minor.patch}; empty for none
     */
    public record Resource(String kind, String group, String plural, String version, String minimumBundleVersion) {
        /** The name of its CustomResourceDefinition, {@code <plural>.<group>}. */
        public String crdName() {
            return plural + "." + group;
        }

        /** {@code group/version/plural}: how readiness and logs name its informer. */
        public String informerName() {
            return group + "/" + version + "/" + plural;
        }
    }

    /** Every kind istiod reads, in the order its controller lists them. */
    public static final List<Resource> RESOURCES = List.of(
            new Resource(GATEWAY_CLASS, GROUP, "gatewayclasses", "v1", ""),
            new Resource(GATEWAY, GROUP, "gateways", "v1", ""),
            new Resource(LISTENER_SET, GROUP, "listenersets", "v1", ""),
            new Resource(HTTP_ROUTE, GROUP, "httproutes", "v1", ""),
            new Resource(GRPC_ROUTE, GROUP, "grpcroutes", "v1", "1.1.0"),
            new Resource(TCP_ROUTE, GROUP, "tcproutes", "v1", "1.6.0"),
            new Resource(TLS_ROUTE, GROUP, "tlsroutes", "v1", "1.5.0"),
            new Resource(REFERENCE_GRANT, GROUP, "referencegrants", "v1beta1", ""),
            new Resource(BACKEND_TLS_POLICY, GROUP, "backendtlspolicies", "v1", "1.4.0"));

    private GatewayApiKinds() {
    }
}
