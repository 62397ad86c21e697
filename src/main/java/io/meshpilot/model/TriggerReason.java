package io.meshpilot.model;

/** Why a push was requested; the {@code type} label of istiod's pilot_push_triggers. */
public enum TriggerReason {
    ENDPOINT("endpoint"),
    CONFIG("config"),
    SERVICE("service"),
    PROXY("proxy"),
    GLOBAL("global"),
    NETWORKS("networks"),
    UNKNOWN("unknown"),
    DEBUG("debug"),
    /** A TLS credential (Secret) changed: an SDS-only push (istiod's SecretTrigger). */
    SECRET("secret"),
    /** The ambient index changed: ztunnels get the changed Address resources (istiod's AmbientUpdate). */
    AMBIENT("ambient");

    private final String label;

    TriggerReason(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
