package io.meshpilot.features;

import java.util.List;

/**
 * istiod's {@code JWT_POLICY}: which service-account tokens agents present. Third-party
 * tokens are projected with audience {@code istio-ca} and the TokenReview asks for that
 * audience; first-party tokens are the legacy mounted ones, reviewed against the API
 * server's own audience.
 */
public enum JwtPolicy {
    THIRD_PARTY("third-party-jwt", List.of("istio-ca")),
    FIRST_PARTY("first-party-jwt", List.of());

    private final String envValue;
    private final List<String> audiences;

    JwtPolicy(String envValue, List<String> audiences) {
        this.envValue = envValue;
        this.audiences = audiences;
    }

    /** The audiences a TokenReview asks for; empty: the API server's own. */
    public List<String> audiences() {
        return audiences;
    }

    public String envValue() {
        return envValue;
    }

    /**
     * @throws IllegalArgumentException naming JWT_POLICY and the accepted values
     */
    public static JwtPolicy fromEnv(String value) {
        for (JwtPolicy p : values()) {
            if (p.envValue.equals(value)) {
                return p;
            }
        }
        throw new IllegalArgumentException("JWT_POLICY=" + value + ": must be third-party-jwt or first-party-jwt");
    }
}
