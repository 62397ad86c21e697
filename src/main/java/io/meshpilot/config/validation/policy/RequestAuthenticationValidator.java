package io.meshpilot.config.validation.policy;

import io.meshpilot.api.security.v1beta1.ClaimToHeader;
import io.meshpilot.api.security.v1beta1.JWTHeader;
import io.meshpilot.api.security.v1beta1.JWTRule;
import io.meshpilot.api.security.v1beta1.RequestAuthentication;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Checks;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.regex.Pattern;

/**
 * istiod's ValidateRequestAuthentication (plus the CRD's rules): targeting, and per JWT rule
 * an issuer (or a jwksUri), an http(s) jwksUri, a parseable inline jwks, non-empty token
 * locations and audiences, valid output header names, a timeout of at least 1ms.
 */
public final class RequestAuthenticationValidator implements Validator {
    /** istiod's strict header names for claim-to-header output (letters, digits, '-'). */
    static final Pattern STRICT_HEADER = Pattern.compile("[-A-Za-z0-9]+");
    /** RFC 7230 token characters: any header name Envoy accepts to write. */
    static final Pattern HEADER_TOKEN = Pattern.compile("[!#$%&'*+\\-.^_`|~A-Za-z0-9]+");
    /** The CRD's limit on jwksUri. */
    private static final int MAX_JWKS_URI = 2048;
    /** The CRD's limit on spaceDelimitedClaims. */
    private static final int MAX_SPACE_DELIMITED_CLAIMS = 64;

    @Override
    public void validate(Config config, Validation v) {
        PolicyChecks.noDryRun(config, v);
        RequestAuthentication ra = (RequestAuthentication) config.spec();
        Validation spec = v.at("spec");
        PolicyChecks.targeting(spec, ra.hasSelector() ? ra.getSelector() : null,
                ra.hasTargetRef() ? ra.getTargetRef() : null, ra.getTargetRefsList());
        for (int i = 0; i < ra.getJwtRulesCount(); i++) {
            rule(spec.at("jwtRules", i), ra.getJwtRules(i));
        }
    }

    private static void rule(Validation v, JWTRule rule) {
        if (rule.getIssuer().isEmpty() && rule.getJwksUri().isEmpty()) {
            v.error("issuer", "issuer is required (it may only be left out when jwksUri is set)");
        }
        PolicyChecks.noEmpty(v, "audiences", rule.getAudiencesList());
        if (!rule.getJwksUri().isEmpty()) {
            jwksUri(v.at("jwksUri"), rule.getJwksUri());
        }
        if (!rule.getJwks().isEmpty()) {
            String why = JwksSyntax.check(rule.getJwks());
            if (why != null) {
                v.error("jwks", why);
            }
            if (!rule.getJwksUri().isEmpty()) {
                v.warn("jwksUri", "both jwks and jwksUri are set: the inline jwks is used and jwksUri is ignored");
            }
        }
        for (int j = 0; j < rule.getFromHeadersCount(); j++) {
            JWTHeader h = rule.getFromHeaders(j);
            if (h.getName().isEmpty()) {
                v.at("fromHeaders", j).error("name", "header name is required");
            }
        }
        PolicyChecks.noEmpty(v, "fromParams", rule.getFromParamsList());
        PolicyChecks.noEmpty(v, "fromCookies", rule.getFromCookiesList());
        String payload = rule.getOutputPayloadToHeader();
        if (!payload.isEmpty() && !HEADER_TOKEN.matcher(payload).matches()) {
            v.error("outputPayloadToHeader", "\"" + payload + "\" is not a valid header name");
        }
        for (int j = 0; j < rule.getOutputClaimToHeadersCount(); j++) {
            ClaimToHeader c = rule.getOutputClaimToHeaders(j);
            Validation at = v.at("outputClaimToHeaders", j);
            if (c.getHeader().isEmpty()) {
                at.error("header", "header name is required");
            } else if (!STRICT_HEADER.matcher(c.getHeader()).matches()) {
                at.error("header", "\"" + c.getHeader() + "\" is not a valid header name (letters, digits and '-')");
            }
            if (c.getClaim().isEmpty()) {
                at.error("claim", "claim name is required");
            }
        }
        PolicyChecks.noEmpty(v, "spaceDelimitedClaims", rule.getSpaceDelimitedClaimsList());
        if (rule.getSpaceDelimitedClaimsCount() > MAX_SPACE_DELIMITED_CLAIMS) {
            v.error("spaceDelimitedClaims", "at most " + MAX_SPACE_DELIMITED_CLAIMS + " claims (the CRD's limit)");
        }
        if (rule.hasTimeout()) {
            Checks.duration(v.at("timeout"), rule.getTimeout());
        }
    }

    private static void jwksUri(Validation v, String uri) {
        if (uri.length() > MAX_JWKS_URI) {
            v.error("jwksUri must be at most " + MAX_JWKS_URI + " characters");
            return;
        }
        UrlSyntax.Url url;
        try {
            url = UrlSyntax.parse(uri);
        } catch (UrlSyntax.Invalid e) {
            v.error("\"" + uri + "\" is not a valid URL: " + e.getMessage());
            return;
        }
        if (url.scheme().isEmpty()) {
            v.error("\"" + uri + "\" has no URL scheme; jwksUri must start with http:// or https://");
        } else if (!url.scheme().equals("http") && !url.scheme().equals("https")) {
            v.error("URL scheme \"" + url.scheme() + "\" is not supported; jwksUri must start with http:// or https://");
        } else if (url.host().isEmpty()) {
            v.error("\"" + uri + "\" has no host");
        } else if (!url.port().isEmpty() && (url.port().length() > 5 || Integer.parseInt(url.port()) > 65535)) {
            v.error("\"" + uri + "\" has an invalid port");
        }
    }
}
