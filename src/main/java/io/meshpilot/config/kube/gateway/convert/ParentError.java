package io.meshpilot.config.kube.gateway.convert;

/**
 * Why a route may not attach to one listener of a parent (istiod's ParentError): reported as
 * the route's Accepted=False condition for that parentRef, with the listeners' errors ranked.
 */
record ParentError(String reason, String message) {
    static final String NO_MATCHING_PARENT = "NoMatchingParent";
    static final String NOT_ALLOWED_BY_LISTENERS = "NotAllowedByListeners";
    static final String NO_MATCHING_LISTENER_HOSTNAME = "NoMatchingListenerHostname";
    static final String PARENT_REF_CONFLICT = "ParentRefConflict";

    /**
     * istiod's rank of the reason when one parentRef matched several listeners: the lowest rank
     * is reported (1 NotAllowed, 2 NoHostname, 3 ParentRefConflict, 4 NoMatchingParent).
     */
    int rank() {
        return switch (reason) {
            case NOT_ALLOWED_BY_LISTENERS -> 1;
            case NO_MATCHING_LISTENER_HOSTNAME -> 2;
            case PARENT_REF_CONFLICT -> 3;
            case NO_MATCHING_PARENT -> 4;
            default -> 0;
        };
    }
}
