package io.meshpilot.security.ca;

import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.SecureRandom;
import java.security.spec.ECGenParameterSpec;
import java.time.Duration;
import java.util.Objects;

/**
 * How a self-signed root is made. Defaults are istiod's: RSA 2048
 * ({@code CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE}), 10 years ({@code CITADEL_SELF_SIGNED_CA_CERT_TTL}
 * 87600h), Organization = trust domain ({@code cluster.local}). EC P-256 is an addition.
 *
 * @param keyType    RSA or EC P-256
 * @param rsaKeySize RSA modulus bits (ignored for EC), at least 2048
 * @param ttl        root certificate lifetime
 * @param org        the root's Organization; istiod uses the trust domain
 */
public record SelfSignedOptions(KeyType keyType, int rsaKeySize, Duration ttl, String org) {
    public static final int DEFAULT_RSA_KEY_SIZE = 2048;
    public static final Duration DEFAULT_TTL = Duration.ofHours(87600);
    public static final String DEFAULT_ORG = "cluster.local";

    public enum KeyType { RSA, EC_P256 }

    public SelfSignedOptions {
        Objects.requireNonNull(keyType, "keyType");
        Objects.requireNonNull(ttl, "ttl");
        if (keyType == KeyType.RSA && rsaKeySize < KeyPolicy.MIN_RSA_BITS) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE " + rsaKeySize
                    + " is below the " + KeyPolicy.MIN_RSA_BITS + "-bit minimum");
        }
        if (ttl.isNegative() || ttl.isZero()) {
            throw new IllegalArgumentException("CITADEL_SELF_SIGNED_CA_CERT_TTL must be positive, got " + ttl);
        }
        if (org == null || org.isBlank()) {
            throw new IllegalArgumentException("the self-signed root needs an Organization (the trust domain)");
        }
    }

    public static SelfSignedOptions defaults() {
        return new SelfSignedOptions(KeyType.RSA, DEFAULT_RSA_KEY_SIZE, DEFAULT_TTL, DEFAULT_ORG);
    }

    public SelfSignedOptions withKeyType(KeyType type) {
        return new SelfSignedOptions(type, rsaKeySize, ttl, org);
    }

    public SelfSignedOptions withRsaKeySize(int bits) {
        return new SelfSignedOptions(keyType, bits, ttl, org);
    }

    public SelfSignedOptions withTtl(Duration value) {
        return new SelfSignedOptions(keyType, rsaKeySize, value, org);
    }

    public SelfSignedOptions withOrg(String value) {
        return new SelfSignedOptions(keyType, rsaKeySize, ttl, value);
    }

    KeyPair generateKeyPair() {
        try {
            if (keyType == KeyType.EC_P256) {
                KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
                gen.initialize(new ECGenParameterSpec("secp256r1"), new SecureRandom());
                return gen.generateKeyPair();
            }
            KeyPairGenerator gen = KeyPairGenerator.getInstance("RSA");
            gen.initialize(rsaKeySize, new SecureRandom());
            return gen.generateKeyPair();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("cannot generate the " + keyType + " root key: " + e.getMessage(), e);
        }
    }
}
