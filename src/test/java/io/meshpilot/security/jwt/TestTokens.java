package io.meshpilot.security.jwt;

import java.nio.charset.StandardCharsets;
import java.security.Key;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Base64;
import java.util.Map;
import java.util.function.Consumer;
import org.jose4j.jwk.EcJwkGenerator;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.PublicJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.jwt.NumericDate;
import org.jose4j.keys.EllipticCurves;

/** Keys and tokens minted with jose4j for the authenticator tests. */
final class TestTokens {
    static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
    static final String ISSUER = "https://issuer.test";
    static final String AUDIENCE = "istio-ca";

    private TestTokens() {
    }

    static PublicJsonWebKey rsa(String kid) {
        try {
            PublicJsonWebKey k = RsaJwkGenerator.generateJwk(2048);
            k.setKeyId(kid);
            return k;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    static PublicJsonWebKey ec(String kid) {
        try {
            PublicJsonWebKey k = EcJwkGenerator.generateJwk(EllipticCurves.P256);
            k.setKeyId(kid);
            return k;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** The public half of {@code keys} as a JWKS document. */
    static String jwks(JsonWebKey... keys) {
        return new JsonWebKeySet(keys).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
    }

    /** Valid claims: issuer, audience, an hour to live, and the subject form of default/sleep. */
    static JwtClaims claims() {
        JwtClaims c = new JwtClaims();
        c.setIssuer(ISSUER);
        c.setAudience(AUDIENCE);
        c.setIssuedAt(at(NOW));
        c.setExpirationTime(at(NOW.plus(Duration.ofHours(1))));
        c.setSubject("system:serviceaccount:default:sleep");
        return c;
    }

    static JwtClaims claims(Consumer<JwtClaims> change) {
        JwtClaims c = claims();
        change.accept(c);
        return c;
    }

    /** The structured Kubernetes claim of a projected service account token. */
    static Map<String, Object> kubernetesClaim(String namespace, String serviceAccount) {
        return Map.of("namespace", namespace,
                "serviceaccount", Map.of("name", serviceAccount, "uid", "7f1c2a52-0000-4000-8000-000000000001"),
                "pod", Map.of("name", serviceAccount + "-0", "uid", "7f1c2a52-0000-4000-8000-000000000002"));
    }

    static NumericDate at(Instant t) {
        return NumericDate.fromSeconds(t.getEpochSecond());
    }

    static String sign(PublicJsonWebKey key, String alg, JwtClaims claims) {
        return sign(key.getPrivateKey(), alg, key.getKeyId(), claims.toJson());
    }

    static String sign(Key key, String alg, String kid, String payload) {
        try {
            JsonWebSignature jws = new JsonWebSignature();
            jws.setAlgorithmHeaderValue(alg);
            if (kid != null) {
                jws.setKeyIdHeaderValue(kid);
            }
            jws.setPayload(payload);
            jws.setKey(key);
            jws.setDoKeyValidation(false);
            return jws.getCompactSerialization();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }

    /** A token assembled by hand: base64url(header).base64url(payload).{@code signature}. */
    static String raw(String header, String payload, String signature) {
        return b64(header) + "." + b64(payload) + "." + signature;
    }

    static String b64(String s) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(s.getBytes(StandardCharsets.UTF_8));
    }

    /** A clock the test moves. */
    static final class MutableClock extends Clock {
        private volatile Instant now;

        MutableClock(Instant start) {
            now = start;
        }

        void advance(Duration d) {
            now = now.plus(d);
        }

        @Override
        public Instant instant() {
            return now;
        }

        @Override
        public ZoneId getZone() {
            return ZoneOffset.UTC;
        }

        @Override
        public Clock withZone(ZoneId zone) {
            return this;
        }
    }
}
