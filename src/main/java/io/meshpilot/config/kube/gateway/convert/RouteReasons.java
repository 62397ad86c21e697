package io.meshpilot.config.kube.gateway.convert;

/**
 * The reasons a route's ResolvedRefs condition reports for a {@link ConfigError} (istiod's
 * ConfigErrorReason values in pilot/pkg/config/kube/gateway/conditions.go).
 */
final class RouteReasons {
    static final String INVALID_DESTINATION = "InvalidDestination";
    static final String REF_NOT_PERMITTED = "RefNotPermitted";
    static final String INVALID_KIND = "InvalidKind";
    static final String BACKEND_NOT_FOUND = "BackendNotFound";
    static final String INVALID_FILTER = "InvalidFilter";
    static final String INVALID_CONFIGURATION = "InvalidConfiguration";

    private RouteReasons() {
    }

    /**
     * A backend that cannot be used but does not invalidate its rule: the rule keeps an empty or
     * unknown destination (so its share of traffic fails) and the other backends keep working.
     */
    static boolean invalidBackend(ConfigError error) {
        return error.reason().equals(REF_NOT_PERMITTED) || error.reason().equals(BACKEND_NOT_FOUND)
                || error.reason().equals(INVALID_KIND);
    }
}
