package io.meshpilot.security;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.PrivateKey;
import java.util.Base64;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJsonWebKey;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;
import org.jose4j.lang.JoseException;

/** An OIDC issuer for tests: an RSA key published as a JWKS, and tokens signed with it. */
final class Tokens {
    static final String ISSUER = "https://issuer.meshpilot.test";
    static final String AUDIENCE = "istio-ca";

    final RsaJsonWebKey key;

    Tokens(String kid) throws JoseException {
        key = RsaJwkGenerator.generateJwk(2048);
        key.setKeyId(kid);
    }

    String jwks() {
        return new JsonWebKeySet(key).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY);
    }

    /** JWT_RULE for this issuer with its key set in {@code jwksFile}. */
    static String rule(Path jwksFile) {
        return "{\"issuer\":\"" + ISSUER + "\",\"audiences\":[\"" + AUDIENCE + "\"],\"jwksUri\":\"" + jwksFile.toUri() + "\"}";
    }

    /** Claims of a Kubernetes service-account token for {@code ns}/{@code sa}, valid for ten minutes. */
    static JwtClaims serviceAccount(String ns, String sa) {
        JwtClaims c = new JwtClaims();
        c.setIssuer(ISSUER);
        c.setAudience(AUDIENCE);
        c.setSubject("system:serviceaccount:" + ns + ":" + sa);
        c.setIssuedAtToNow();
        c.setExpirationTimeMinutesInTheFuture(10);
        return c;
    }

    String sign(JwtClaims claims) throws JoseException {
        return sign(claims, key.getPrivateKey(), key.getKeyId());
    }

    static String sign(JwtClaims claims, PrivateKey with, String kid) throws JoseException {
        JsonWebSignature jws = new JsonWebSignature();
        jws.setPayload(claims.toJson());
        jws.setKey(with);
        jws.setKeyIdHeaderValue(kid);
        jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
        return jws.getCompactSerialization();
    }

    /** An unsigned token ({@code alg: none}), which no library will make for us. */
    static String unsigned(JwtClaims claims) {
        Base64.Encoder b64 = Base64.getUrlEncoder().withoutPadding();
        return b64.encodeToString("{\"alg\":\"none\",\"kid\":\"k1\"}".getBytes(StandardCharsets.UTF_8)) + "."
                + b64.encodeToString(claims.toJson().getBytes(StandardCharsets.UTF_8)) + ".";
    }
}
