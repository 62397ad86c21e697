package io.meshpilot.config.kube.gateway.convert;

/**
 * One desired status condition before it is written (istiod's ListenerStatusCondition): its
 * status when all is well, with reason and message, and the error that, when set, replaces
 * reason and message and inverts the status ({@code True} becomes {@code False} and the other
 * way round, as istiod's kstatus.InvertStatus), so a condition that is normally {@code False}
 * (Conflicted) reads {@code True} on error.
 *
 * @param status  {@code True} or {@code False} when there is no error
 * @param error   null when there is none
 */
public record Condition(String status, String reason, String message, ConfigError error) {
    public static final String TRUE = "True";
    public static final String FALSE = "False";

    /** A {@code True} condition. */
    public static Condition ok(String reason, String message) {
        return new Condition(TRUE, reason, message, null);
    }

    /** A condition with {@code status} and no error. */
    public static Condition of(String status, String reason, String message) {
        return new Condition(status, reason, message, null);
    }

    public Condition withError(ConfigError e) {
        return new Condition(status, reason, message, e);
    }

    public Condition withReason(String newReason, String newMessage) {
        return new Condition(status, newReason, newMessage, error);
    }

    /** The status written: inverted by an error. */
    public String effectiveStatus() {
        if (error == null) {
            return status;
        }
        return FALSE.equals(status) ? TRUE : FALSE;
    }

    public String effectiveReason() {
        return error == null ? reason : error.reason();
    }

    public String effectiveMessage() {
        return error == null ? message : error.message();
    }
}
