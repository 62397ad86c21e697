package io.meshpilot.config.kube.gateway.convert;

/**
 * Why a route (or one of its rules or backends) could not be fully converted: istiod's
 * ConfigError, reported as the route's ResolvedRefs=False condition with this reason and message.
 */
record RouteError(String reason, String message) {
    static final String INVALID_DESTINATION = "InvalidDestination";
    static final String REF_NOT_PERMITTED = "RefNotPermitted";
    static final String INVALID_KIND = "InvalidKind";
    static final String BACKEND_NOT_FOUND = "BackendNotFound";
    static final String INVALID_FILTER = "InvalidFilter";
    static final String INVALID_CONFIGURATION = "InvalidConfiguration";

    /**
     * A backend that cannot be used but does not invalidate its rule: the rule keeps an empty or
     * unknown destination (so its traffic fails) and the other backends keep working.
     */
    boolean invalidBackend() {
        return reason.equals(REF_NOT_PERMITTED) || reason.equals(BACKEND_NOT_FOUND) || reason.equals(INVALID_KIND);
    }

    /** istiod's joinErrors: the first error's reason with both messages. */
    static RouteError join(RouteError first, RouteError second) {
        if (second == null) {
            return first;
        }
        if (first == null) {
            return second;
        }
        return new RouteError(first.reason, first.message + "; " + second.message);
    }
}
