package io.meshpilot.security.ca;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.Signature;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.util.Map;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1ObjectIdentifier;
import org.bouncycastle.asn1.edec.EdECObjectIdentifiers;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.sec.SECObjectIdentifiers;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.asn1.x9.ECNamedCurveTable;
import org.bouncycastle.asn1.x9.X9ObjectIdentifiers;

/** Which keys the CA accepts, and which signature algorithm goes with a CA key. */
final class KeyPolicy {
    static final int MIN_RSA_BITS = 2048;
    /** Above this an RSA signature check costs enough to be a cheap way to load the CA. */
    static final int MAX_RSA_BITS = 8192;

    private static final Map<ASN1ObjectIdentifier, String> ALGORITHM_NAMES = Map.of(
            EdECObjectIdentifiers.id_Ed25519, "Ed25519",
            EdECObjectIdentifiers.id_Ed448, "Ed448",
            X9ObjectIdentifiers.id_dsa, "DSA",
            PKCSObjectIdentifiers.id_RSASSA_PSS, "RSASSA-PSS");

    private KeyPolicy() {
    }

    /**
     * As Go's x509 picks for istiod: SHA-256 with RSA for every RSA size, and the ECDSA hash
     * that matches the curve size.
     */
    static String signatureAlgorithm(PublicKey caKey) {
        return switch (caKey) {
            case RSAPublicKey ignored -> "SHA256withRSA";
            case ECPublicKey ec -> {
                int bits = ec.getParams().getCurve().getField().getFieldSize();
                yield bits <= 256 ? "SHA256withECDSA" : bits <= 384 ? "SHA384withECDSA" : "SHA512withECDSA";
            }
            default -> throw new IllegalArgumentException("unsupported CA key type " + caKey.getAlgorithm());
        };
    }

    /** Why a CA key cannot be used, or null when it can. */
    static String caKeyProblem(PublicKey key) {
        return switch (key) {
            case RSAPublicKey rsa when rsa.getModulus().bitLength() < MIN_RSA_BITS ->
                    "RSA key of " + rsa.getModulus().bitLength() + " bits is below the " + MIN_RSA_BITS + "-bit minimum";
            case RSAPublicKey ignored -> null;
            case ECPublicKey ignored -> null;
            default -> "CA key type " + key.getAlgorithm() + " is not supported (RSA or EC)";
        };
    }

    /** Why a CSR key cannot be certified, or null when it can: RSA 2048..8192 bits, EC P-256 or P-384. */
    static String csrKeyProblem(SubjectPublicKeyInfo spki) throws IOException {
        ASN1ObjectIdentifier alg = spki.getAlgorithm().getAlgorithm();
        if (PKCSObjectIdentifiers.rsaEncryption.equals(alg)) {
            int bits = org.bouncycastle.asn1.pkcs.RSAPublicKey.getInstance(spki.parsePublicKey()).getModulus().bitLength();
            if (bits < MIN_RSA_BITS) {
                return "RSA key of " + bits + " bits is below the " + MIN_RSA_BITS + "-bit minimum";
            }
            if (bits > MAX_RSA_BITS) {
                return "RSA key of " + bits + " bits is above the " + MAX_RSA_BITS + "-bit maximum";
            }
            return null;
        }
        if (X9ObjectIdentifiers.id_ecPublicKey.equals(alg)) {
            ASN1Encodable params = spki.getAlgorithm().getParameters();
            if (!(params instanceof ASN1ObjectIdentifier curve)) {
                return "EC key with explicit curve parameters is not supported; use the named curve P-256 or P-384";
            }
            if (SECObjectIdentifiers.secp256r1.equals(curve) || SECObjectIdentifiers.secp384r1.equals(curve)) {
                return null;
            }
            String name = ECNamedCurveTable.getName(curve);
            return "EC curve " + (name != null ? name : curve.getId()) + " is not supported; use P-256 or P-384";
        }
        return "key algorithm " + ALGORITHM_NAMES.getOrDefault(alg, alg.getId())
                + " is not supported; use RSA (2048 bits or more) or EC P-256/P-384";
    }

    /** Proves possession by signing a random probe with {@code key} and checking it with {@code pub}. */
    static boolean keyMatches(PrivateKey key, PublicKey pub) {
        try {
            String alg = signatureAlgorithm(pub);
            byte[] probe = new byte[32];
            new SecureRandom().nextBytes(probe);
            Signature signer = Signature.getInstance(alg);
            signer.initSign(key);
            signer.update(probe);
            byte[] sig = signer.sign();
            Signature verifier = Signature.getInstance(alg);
            verifier.initVerify(pub);
            verifier.update(probe);
            return verifier.verify(sig);
        } catch (GeneralSecurityException | RuntimeException e) {
            return false;
        }
    }
}
