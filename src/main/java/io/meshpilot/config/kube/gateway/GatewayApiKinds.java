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
    /** The route kinds, in the order istiod's status dump and conversion list them. */
    public static final List<String> ROUTE_KINDS = List.of(HTTP_ROUTE, GRPC_ROUTE, TLS_ROUTE, TCP_ROUTE);

    private GatewayApiKinds() {
    }
}
