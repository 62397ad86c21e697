package io.meshpilot.config;

/**
 * istiod's internal annotations on Istio config it generates from the Kubernetes Gateway API
 * (pilot/pkg/config/constants and the gateway conversion): the proxy side reads them to select
 * gateway workloads, to apply Gateway API route semantics and to report status against the
 * objects the config came from.
 */
public final class GeneratedConfigAnnotations {
    /** On generated Gateways: the Services ({@code host,host}) whose workloads serve it; there is no selector. */
    public static final String GATEWAY_SERVICE = "internal.istio.io/gateway-service";
    /** On generated Gateways: {@code gateway} for Gateway API semantics (strict merging, port resolution). */
    public static final String GATEWAY_SEMANTICS = "internal.istio.io/gateway-semantics";
    /** On generated Gateways: the service account of the gateway's workloads (verified credential references). */
    public static final String SERVICE_ACCOUNT_NAME = "internal.istio.io/service-account-name";
    /** On generated config: the objects it came from, {@code Kind/name.namespace[,...]}. */
    public static final String PARENTS = "internal.istio.io/parents";
    /** On generated VirtualServices: the namespace of the parent route. */
    public static final String PARENT_NAMESPACE = "internal.istio.io/parent-namespace";
    /** The value of {@link #GATEWAY_SEMANTICS} and of {@link RouteSemantics#ANNOTATION} for Gateway API config. */
    public static final String GATEWAY = "gateway";

    private GeneratedConfigAnnotations() {
    }
}
