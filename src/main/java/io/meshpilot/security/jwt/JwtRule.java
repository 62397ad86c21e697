package io.meshpilot.security.jwt;

import java.util.List;

/**
 * One trusted token issuer, as in Istio's {@code security.istio.io} JWTRule: only the fields
 * istiod's token authenticator uses. Where the keys come from, in order: {@code jwks} (an
 * inline JWKS document; the JWTRule reference says jwksUri is ignored when both are set), else
 * {@code jwksUri} ({@code https:}, {@code http:} or {@code file:}), else OIDC discovery from
 * the issuer, as istiod does.
 *
 * @param issuer    the exact {@code iss} a token must carry
 * @param audiences a token is accepted when one of its {@code aud} values is listed here; istiod
 *                  accepts no token when the list is empty
 * @param jwksUri   where the key set is fetched from, empty when not set
 * @param jwks      the key set inline (JSON text), empty when not set
 */
public record JwtRule(String issuer, List<String> audiences, String jwksUri, String jwks) {
    public JwtRule {
        issuer = issuer == null ? "" : issuer;
        audiences = audiences == null ? List.of() : List.copyOf(audiences);
        jwksUri = jwksUri == null ? "" : jwksUri;
        jwks = jwks == null ? "" : jwks;
    }
}
