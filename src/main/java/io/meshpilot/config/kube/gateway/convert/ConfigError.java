package io.meshpilot.config.kube.gateway.convert;

/**
 * Why part of a Gateway API object could not be used, as a status condition reports it
 * (istiod's ConfigError): a Gateway API reason such as {@code InvalidCertificateRef} and a
 * message for the user.
 */
public record ConfigError(String reason, String message) {

    /** istiod's joinErrors: the first reason, the messages joined by {@code "; "}. */
    public static ConfigError join(ConfigError a, ConfigError b) {
        if (a == null) {
            return b;
        }
        if (b == null) {
            return a;
        }
        return new ConfigError(a.reason, a.message + "; " + b.message);
    }
}
