package io.meshpilot.security.jwt;

import io.meshpilot.security.BearerTokenAuthenticator;
import io.meshpilot.util.PrintableText;
import java.net.URI;
import java.security.PublicKey;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jose4j.jwa.AlgorithmConstraints;
import org.jose4j.jwk.EllipticCurveJsonWebKey;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.PublicJsonWebKey;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.MalformedClaimException;
import org.jose4j.jwt.NumericDate;
import org.jose4j.jwt.consumer.InvalidJwtException;
import org.jose4j.keys.EllipticCurves;
import org.jose4j.lang.JoseException;

/**
 * istiod's OIDC token authenticator (JWT_RULE): a caller that sends
 * {@code authorization: Bearer <JWT>} is the Kubernetes service account the token names,
 * provided the token is signed (RS256 or ES256) by a key of a trusted issuer, is within its
 * validity, and is meant for one of the rule's audiences. The identity is the SPIFFE id in the
 * mesh's current trust domain. A call without a bearer token is not recognized (another
 * authenticator may know the caller); every problem with a presented token is an
 * {@link AuthenticationException} with a short reason.
 *
 * <p>Time rules follow go-oidc, istiod's verifier: {@code exp} is required and has no leeway;
 * {@code nbf} (and here also {@code iat}) may be up to {@link #CLOCK_SKEW} in the future.
 */
public final class JwtAuthenticator implements BearerTokenAuthenticator, AutoCloseable {
    /** istiod's name for it (IDTokenAuthenticatorType). */
    public static final String TYPE = "IDTokenAuthenticator";
    /** How far in the future nbf and iat may be (go-oidc's nbf leeway). */
    public static final Duration CLOCK_SKEW = Duration.ofMinutes(5);
    /** Least time between two loads of one issuer's key set. */
    public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(30);
    /** Bound on fetching a key set or discovery document. */
    public static final Duration FETCH_TIMEOUT = Duration.ofSeconds(10);

    /** Istio's default, for a mesh config that has none. */
    private static final String DEFAULT_TRUST_DOMAIN = "cluster.local";
    private static final AlgorithmConstraints ALGORITHMS = new AlgorithmConstraints(
            AlgorithmConstraints.ConstraintType.PERMIT,
            AlgorithmIdentifiers.RSA_USING_SHA256, AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256);

    private record Issuer(JwtRule rule, JwksSource keys) {
    }

    private final Map<String, Issuer> issuers = new LinkedHashMap<>();
    private final Supplier<String> trustDomain;
    private final Clock clock;
    private final DocumentFetcher fetcher = new DocumentFetcher(FETCH_TIMEOUT);

    public JwtAuthenticator(List<JwtRule> rules, Supplier<String> trustDomain, Clock clock) {
        this(rules, trustDomain, clock, DEFAULT_REFRESH_INTERVAL);
    }

    /**
     * @param rules           the trusted issuers, one rule each
     * @param trustDomain     read per authentication, as the mesh config may change it
     * @param refreshInterval least time between two loads of one issuer's remote key set
     * @throws IllegalArgumentException when there are no rules, two share an issuer, or an inline key set is invalid
     */
    public JwtAuthenticator(List<JwtRule> rules, Supplier<String> trustDomain, Clock clock, Duration refreshInterval) {
        if (rules.isEmpty()) {
            throw new IllegalArgumentException("JWT authenticator: no rules");
        }
        this.trustDomain = trustDomain;
        this.clock = clock;
        for (int i = 0; i < rules.size(); i++) {
            JwtRule rule = rules.get(i);
            if (issuers.putIfAbsent(rule.issuer(), new Issuer(rule, source(i, rule, refreshInterval))) != null) {
                throw new IllegalArgumentException("JWT_RULE: rule " + i + ": issuer: \"" + rule.issuer()
                        + "\" is the issuer of an earlier rule");
            }
        }
    }

    /**
     * The authenticator for the {@code JWT_RULE} environment variable, empty when it is blank.
     *
     * @throws IllegalArgumentException naming the rule and field when the value is invalid
     */
    public static Optional<JwtAuthenticator> fromJwtRule(String jwtRule, Supplier<String> trustDomain) {
        List<JwtRule> rules = JwtRuleParser.parse(jwtRule);
        return rules.isEmpty() ? Optional.empty()
                : Optional.of(new JwtAuthenticator(rules, trustDomain, Clock.systemUTC()));
    }

    private JwksSource source(int index, JwtRule rule, Duration refreshInterval) {
        if (!rule.jwks().isEmpty()) {
            try {
                return new JwksSource.Inline(JwksSource.parse(rule.jwks()));
            } catch (JoseException | RuntimeException e) {
                throw new IllegalArgumentException("JWT_RULE: rule " + index + ": jwks: not a valid JWKS document: "
                        + e.getMessage());
            }
        }
        if (!rule.jwksUri().isEmpty()) {
            URI uri = URI.create(rule.jwksUri());
            return new RemoteJwks(() -> fetcher.fetch(uri), rule.jwksUri(), clock, refreshInterval);
        }
        return new RemoteJwks(() -> fetcher.fetch(OidcDiscovery.jwksUri(fetcher, rule.issuer())),
                "OIDC discovery of " + rule.issuer(), clock, refreshInterval);
    }

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public Caller authenticateToken(String token, Function<String, String> headers) throws AuthenticationException {
        ServiceAccount sa;
        try {
            sa = verify(token);
        } catch (RuntimeException e) {
            // A token jose4j trips over in a way not handled below is still just a bad token.
            throw new AuthenticationException("malformed token: " + e.getClass().getSimpleName());
        }
        String td = trustDomain.get();
        td = td == null || td.isEmpty() ? DEFAULT_TRUST_DOMAIN : td;
        return new Caller(TYPE, List.of(sa.spiffeId(td)));
    }

    /** Verifies {@code token} and returns the service account it names. */
    private ServiceAccount verify(String token) throws AuthenticationException {
        JsonWebSignature jws = parse(token);
        String alg = jws.getAlgorithmHeaderValue();
        if (alg == null) {
            throw new AuthenticationException("malformed token: no alg header");
        }
        if (!AlgorithmIdentifiers.RSA_USING_SHA256.equals(alg)
                && !AlgorithmIdentifiers.ECDSA_USING_P256_CURVE_AND_SHA256.equals(alg)) {
            throw new AuthenticationException("algorithm " + clip(alg) + " not allowed");
        }
        JwtClaims claims;
        String iss;
        try {
            // Read before the signature is checked only to pick the issuer whose keys check it.
            claims = JwtClaims.parse(jws.getUnverifiedPayload());
            iss = claims.getIssuer();
        } catch (InvalidJwtException | MalformedClaimException e) {
            throw new AuthenticationException("malformed token: claims are not a JSON object with a string iss");
        }
        Issuer issuer = iss == null ? null : issuers.get(iss);
        if (issuer == null) {
            throw new AuthenticationException("issuer not trusted: " + clip(iss));
        }
        checkSignature(token, jws, alg, issuer);
        checkTimes(claims);
        checkAudience(claims, issuer.rule());
        return ServiceAccount.of(claims)
                .orElseThrow(() -> new AuthenticationException("no service account identity in token"));
    }

    private static JsonWebSignature parse(String token) throws AuthenticationException {
        int segments = 1;
        for (int i = 0; i < token.length(); i++) {
            char c = token.charAt(i);
            if (c == '.') {
                segments++;
            } else if (!isBase64Url(c)) {
                throw new AuthenticationException("malformed token: not base64url");
            }
        }
        if (segments != 3) {
            throw new AuthenticationException("malformed token: " + segments
                    + (segments == 1 ? " segment" : " segments") + ", a signed JWT has 3");
        }
        try {
            JsonWebSignature jws = new JsonWebSignature();
            jws.setCompactSerialization(token);
            return jws;
        } catch (JoseException e) {
            throw new AuthenticationException("malformed token: header is not a JSON object");
        }
    }

    private static boolean isBase64Url(char c) {
        return c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_';
    }

    private static void checkSignature(String token, JsonWebSignature parsed, String alg, Issuer issuer)
            throws AuthenticationException {
        String kid = parsed.getKeyIdHeaderValue();
        List<JsonWebKey> keys = issuer.keys().keys();
        List<JsonWebKey> named = named(keys, kid);
        if (named.isEmpty() && kid != null) {
            named = named(issuer.keys().reload(keys), kid);
            if (named.isEmpty()) {
                throw new AuthenticationException("unknown key id " + clip(kid));
            }
        }
        List<PublicKey> usable = new ArrayList<>();
        for (JsonWebKey k : named) {
            if (fits(k, alg)) {
                usable.add(((PublicJsonWebKey) k).getPublicKey());
            }
        }
        if (usable.isEmpty()) {
            throw new AuthenticationException("signature invalid: no " + alg + " key"
                    + (kid == null ? "" : " with id " + clip(kid)));
        }
        for (PublicKey key : usable) {
            try {
                JsonWebSignature jws = new JsonWebSignature();
                jws.setCompactSerialization(token);
                jws.setAlgorithmConstraints(ALGORITHMS);
                jws.setKey(key);
                if (jws.verifySignature()) {
                    return;
                }
            } catch (JoseException e) {
                // This key cannot check the token (e.g. an RSA key under 2048 bits); try the next.
            }
        }
        throw new AuthenticationException("signature invalid");
    }

    /** The keys a token may be signed with: those with its kid, or all when it names none (as go-oidc). */
    private static List<JsonWebKey> named(List<JsonWebKey> keys, String kid) {
        if (kid == null) {
            return keys;
        }
        return keys.stream().filter(k -> kid.equals(k.getKeyId())).toList();
    }

    private static boolean fits(JsonWebKey key, String alg) {
        if ("enc".equals(key.getUse()) || key.getAlgorithm() != null && !alg.equals(key.getAlgorithm())) {
            return false;
        }
        return AlgorithmIdentifiers.RSA_USING_SHA256.equals(alg)
                ? key instanceof RsaJsonWebKey
                : key instanceof EllipticCurveJsonWebKey ec && EllipticCurves.P_256.equals(ec.getCurveName());
    }

    private void checkTimes(JwtClaims claims) throws AuthenticationException {
        long now = clock.instant().getEpochSecond();
        long skew = CLOCK_SKEW.toSeconds();
        NumericDate exp = numericDate(claims, "exp");
        if (exp == null) {
            throw new AuthenticationException("token has no expiry (exp)");
        }
        if (now > exp.getValue()) {
            throw new AuthenticationException("token expired");
        }
        NumericDate nbf = numericDate(claims, "nbf");
        if (nbf != null && nbf.getValue() > now + skew) {
            throw new AuthenticationException("token not yet valid");
        }
        NumericDate iat = numericDate(claims, "iat");
        if (iat != null && iat.getValue() > now + skew) {
            throw new AuthenticationException("token issued in the future");
        }
    }

    private static NumericDate numericDate(JwtClaims claims, String name) throws AuthenticationException {
        try {
            return claims.getNumericDateClaimValue(name);
        } catch (MalformedClaimException e) {
            throw new AuthenticationException("malformed token: " + name + " is not a number");
        }
    }

    /**
     * One of the token's audiences must be one of the rule's. As in istiod, a rule that lists no
     * audiences accepts no token (its checkAudience finds no match in an empty list).
     */
    private static void checkAudience(JwtClaims claims, JwtRule rule) throws AuthenticationException {
        List<String> aud;
        try {
            aud = claims.hasAudience() ? claims.getAudience() : List.of();
        } catch (MalformedClaimException e) {
            throw new AuthenticationException("malformed token: aud is not a string or an array of strings");
        }
        if (rule.audiences().isEmpty()) {
            throw new AuthenticationException("audience not allowed: the rule for this issuer lists no audiences");
        }
        if (aud == null || aud.isEmpty()) {
            throw new AuthenticationException("audience missing");
        }
        for (String a : aud) {
            if (rule.audiences().contains(a)) {
                return;
            }
        }
        throw new AuthenticationException("audience not allowed");
    }

    /** A token value for a message: printable ASCII, cut short, so a token cannot flood the log. */
    private static String clip(String s) {
        if (s == null) {
            return "(none)";
        }
        return PrintableText.clip(s, 64);
    }

    /** Ends the HTTP client used to fetch remote key sets. */
    @Override
    public void close() {
        fetcher.close();
    }
}
