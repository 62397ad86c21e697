package io.meshpilot.security.ca;

import java.math.BigInteger;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import org.bouncycastle.asn1.ASN1OctetString;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;

/** Serial numbers and key identifiers, shared by roots and leaves. */
final class CertIds {
    private CertIds() {
    }

    /** Random and positive with 128 bits of entropy, as istiod's genSerialNum. */
    static BigInteger serial(SecureRandom random) {
        BigInteger s;
        do {
            s = new BigInteger(128, random);
        } while (s.signum() == 0);
        return s;
    }

    /** RFC 5280 method 1, SHA-1 of the public key bits: what Go and openssl compute. */
    static byte[] keyId(SubjectPublicKeyInfo spki) {
        try {
            return MessageDigest.getInstance("SHA-1").digest(spki.getPublicKeyData().getBytes());
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-1 is missing from this JDK", e);
        }
    }

    /** The certificate's own subject key identifier, or one computed from its key when it has none. */
    static byte[] keyId(X509Certificate cert) {
        byte[] ext = cert.getExtensionValue(Extension.subjectKeyIdentifier.getId());
        if (ext != null) {
            return SubjectKeyIdentifier.getInstance(ASN1OctetString.getInstance(ext).getOctets()).getKeyIdentifier();
        }
        return keyId(SubjectPublicKeyInfo.getInstance(cert.getPublicKey().getEncoded()));
    }
}
