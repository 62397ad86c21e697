package io.meshpilot.security.ca;

import java.security.PrivateKey;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x500.X500NameBuilder;
import org.bouncycastle.asn1.x500.style.BCStyle;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.CertIOException;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.operator.OperatorCreationException;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Issues a self-signed root certificate for a key, as istiod's GenCertKeyFromOptions does for
 * its self-signed CA (subject O=&lt;trust domain&gt;, CA:TRUE, random 128-bit serial), and
 * re-issues it for the same key when it is rotated.
 */
final class SelfSignedRoot {
    private static final SecureRandom RANDOM = new SecureRandom();

    private SelfSignedRoot() {
    }

    static X500Name subjectFor(String org) {
        return new X500NameBuilder(BCStyle.INSTANCE).addRDN(BCStyle.O, org).build();
    }

    /**
     * Deviations from istiod: keyUsage is keyCertSign + cRLSign (istiod: keyCertSign only), and
     * notBefore is backdated by the same clock-skew allowance as leaves (istiod: now), so that a
     * workload whose clock is a little behind does not see a just-rotated root as not yet valid.
     */
    static X509Certificate issue(PublicKey publicKey, PrivateKey key, X500Name subject, Duration ttl, Instant now) {
        Instant from = now.truncatedTo(ChronoUnit.SECONDS);
        try {
            SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(publicKey.getEncoded());
            X509v3CertificateBuilder b = new X509v3CertificateBuilder(subject, CertIds.serial(RANDOM),
                    Date.from(from.minus(CertificateAuthority.CLOCK_SKEW_GRACE)), Date.from(from.plus(ttl)), subject, spki);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(true));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.keyCertSign | KeyUsage.cRLSign));
            b.addExtension(Extension.subjectKeyIdentifier, false, new SubjectKeyIdentifier(CertIds.keyId(spki)));
            var signer = new JcaContentSignerBuilder(KeyPolicy.signatureAlgorithm(publicKey)).build(key);
            return new JcaX509CertificateConverter().getCertificate(b.build(signer));
        } catch (CertIOException | OperatorCreationException | CertificateException e) {
            throw new IllegalStateException("cannot issue the self-signed root: " + e.getMessage(), e);
        }
    }

    /**
     * A new root for the same key and exactly the same subject, so every certificate the old
     * root signed also verifies against the new one. Roots still valid at {@code now} stay in
     * the trust bundle after it.
     */
    static CaMaterial reissue(CaMaterial current, Duration ttl, Instant now) {
        X509Certificate old = current.signingCertificate();
        X509Certificate fresh = issue(old.getPublicKey(), current.signingKey(),
                X500Name.getInstance(old.getSubjectX500Principal().getEncoded()), ttl, now);
        List<X509Certificate> roots = new ArrayList<>();
        roots.add(fresh);
        for (X509Certificate r : current.roots()) {
            if (!roots.contains(r) && r.getNotAfter().toInstant().isAfter(now)) {
                roots.add(r);
            }
        }
        return new CaMaterial(fresh, current.signingKey(), List.of(), roots, current.origin());
    }
}
