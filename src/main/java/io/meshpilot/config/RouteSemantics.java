package io.meshpilot.config;

/**
 * istiod's internal annotation on VirtualServices it generates from other kinds
 * (constants.InternalRouteSemantics): routes of an Ingress match prefixes by path segment
 * ({@code /cart} matches {@code /cart/x}, not {@code /carts}), as the Ingress API defines Prefix;
 * routes of the Kubernetes Gateway API ({@link #GATEWAY}) do too, and more of the Gateway API's
 * rules (docs/XDS.md).
 */
public final class RouteSemantics {
    public static final String ANNOTATION = "internal.istio.io/route-semantics";
    public static final String INGRESS = "ingress";
    public static final String GATEWAY = "gateway";

    private RouteSemantics() {
    }

    /** Whether {@code config} is a VirtualService generated from Ingresses. */
    public static boolean ingress(Config config) {
        return INGRESS.equals(config.annotations().get(ANNOTATION));
    }

    /** Whether {@code config} is a VirtualService generated from Gateway API routes. */
    public static boolean gatewayApi(Config config) {
        return GATEWAY.equals(config.annotations().get(ANNOTATION));
    }
}
