package io.meshpilot.security.ca;

import io.meshpilot.security.ca.CsrRejectedException.Reason;
import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.security.PublicKey;
import java.security.SecureRandom;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Date;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.AuthorityKeyIdentifier;
import org.bouncycastle.asn1.x509.BasicConstraints;
import org.bouncycastle.asn1.x509.ExtendedKeyUsage;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.KeyPurposeId;
import org.bouncycastle.asn1.x509.KeyUsage;
import org.bouncycastle.asn1.x509.SubjectKeyIdentifier;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.cert.X509CertificateHolder;
import org.bouncycastle.cert.X509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;

/**
 * Signs workload certificates from CSRs, and istiod's own serving certificate, with the
 * current {@link CaMaterial}. Thread-safe; {@link #update} swaps the material (rotation) and a
 * signing already under way finishes with the material it started with.
 *
 * <p>Leaf profile, as istiod's GenCertFromCSR: empty subject with the identities as a critical
 * SAN, CA:FALSE, digitalSignature + keyEncipherment, serverAuth + clientAuth, random 128-bit
 * serial, notBefore backdated by {@link #CLOCK_SKEW_GRACE}. Added here: SKI and AKI (Go adds
 * only AKI to leaves), which openssl and Envoy use to pick the issuer quickly.
 */
public final class CertificateAuthority implements CsrSigner {
    /** istiod's DEFAULT_WORKLOAD_CERT_TTL: used when the request asks for no positive TTL. */
    public static final Duration DEFAULT_WORKLOAD_CERT_TTL = Duration.ofHours(24);
    /** istiod's MAX_WORKLOAD_CERT_TTL (2160h): a longer request is rejected, not clamped. */
    public static final Duration DEFAULT_MAX_WORKLOAD_CERT_TTL = Duration.ofDays(90);
    /** Larger CSRs are refused before parsing; a real one is 1-2 KiB. */
    public static final int MAX_CSR_BYTES = 64 * 1024;
    /** istiod's ClockSkewGracePeriod: a certificate is valid from 2 minutes before it was issued. */
    public static final Duration CLOCK_SKEW_GRACE = Duration.ofMinutes(2);

    private static final X500Name EMPTY_SUBJECT = new X500Name(new RDN[0]);
    private static final ExtendedKeyUsage SERVER_AND_CLIENT =
            new ExtendedKeyUsage(new KeyPurposeId[] {KeyPurposeId.id_kp_serverAuth, KeyPurposeId.id_kp_clientAuth});

    private final AtomicReference<Signer> signer = new AtomicReference<>();
    private final Duration defaultTtl;
    private final Duration maxTtl;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    public CertificateAuthority(CaMaterial material) {
        this(material, DEFAULT_WORKLOAD_CERT_TTL, DEFAULT_MAX_WORKLOAD_CERT_TTL, Clock.systemUTC());
    }

    public CertificateAuthority(CaMaterial material, Duration defaultTtl, Duration maxTtl, Clock clock) {
        this.defaultTtl = positive(defaultTtl, "DEFAULT_WORKLOAD_CERT_TTL");
        this.maxTtl = positive(maxTtl, "MAX_WORKLOAD_CERT_TTL");
        this.clock = Objects.requireNonNull(clock, "clock");
        update(material);
    }

    /** The material signing now. */
    public CaMaterial material() {
        return signer.get().material();
    }

    /** Signs with {@code material} from now on (root rotation, plugged-in files replaced). */
    public void update(CaMaterial material) {
        signer.set(Signer.of(material));
    }

    public Duration defaultTtl() {
        return defaultTtl;
    }

    public Duration maxTtl() {
        return maxTtl;
    }

    /**
     * Issues a workload certificate for the key in {@code csrPem}, naming exactly
     * {@code identities} (the authenticated caller's, never taken from the CSR).
     *
     * @param requestedTtl null, zero or negative for the default; above the maximum is rejected
     */
    @Override
    public IssuedChain sign(String csrPem, List<String> identities, Duration requestedTtl) throws CsrRejectedException {
        Checked checked = check(csrPem, identities, requestedTtl);
        return issue(checked.request().publicKey(), checked.sans(), checked.ttl());
    }

    /**
     * The checks {@link #sign} makes before issuing (istiod's preSign), for a registration
     * authority that passes the CSR on to another signer: size, parse, signature, key, SANs
     * only from {@code identities}, lifetime. Returns the lifetime to ask for.
     */
    public Duration checkRequest(String csrPem, List<String> identities, Duration requestedTtl)
            throws CsrRejectedException {
        return check(csrPem, identities, requestedTtl).ttl();
    }

    private record Checked(SigningRequest request, GeneralName[] sans, Duration ttl) {
    }

    private Checked check(String csrPem, List<String> identities, Duration requestedTtl) throws CsrRejectedException {
        if (csrPem == null || csrPem.isBlank()) {
            throw new CsrRejectedException(Reason.MALFORMED_CSR, "the CSR is empty");
        }
        if (csrPem.length() > MAX_CSR_BYTES || csrPem.getBytes(StandardCharsets.UTF_8).length > MAX_CSR_BYTES) {
            throw new CsrRejectedException(Reason.TOO_LARGE, "the CSR is larger than " + MAX_CSR_BYTES
                    + " bytes; a CSR for one key is 1-2 KiB");
        }
        GeneralName[] sans = IdentitySans.of(identities);
        Duration ttl = effectiveTtl(requestedTtl);
        SigningRequest request = SigningRequest.parse(csrPem);
        request.checkSansAllowed(sans);
        return new Checked(request, sans, ttl);
    }

    /**
     * istiod's own serving certificate (15012, 15017): DNS SANs for {@code hostnames} (IP
     * literals as IP SANs), plus 127.0.0.1 and ::1 when "localhost" is among them. Not bound by
     * the workload maximum TTL (istiod signs it without the lifetime check either).
     */
    public IssuedChain issueServing(PublicKey key, List<String> hostnames, Duration ttl) {
        Objects.requireNonNull(key, "key");
        if (hostnames == null || hostnames.isEmpty()) {
            throw new IllegalArgumentException("a serving certificate needs at least one host name");
        }
        positive(ttl, "serving certificate TTL");
        SubjectPublicKeyInfo spki = SubjectPublicKeyInfo.getInstance(key.getEncoded());
        try {
            String problem = KeyPolicy.csrKeyProblem(spki);
            if (problem != null) {
                throw new IllegalArgumentException("serving key rejected: " + problem);
            }
        } catch (IOException e) {
            throw new IllegalArgumentException("serving key does not parse: " + e.getMessage(), e);
        }
        Set<String> names = new LinkedHashSet<>();
        for (String h : hostnames) {
            String problem = IdentitySans.problem(h);
            if (problem != null) {
                throw new IllegalArgumentException("host name \"" + h + "\" " + problem);
            }
            names.add(h);
        }
        if (names.contains("localhost")) {
            names.add("127.0.0.1");
            names.add("::1");
        }
        GeneralName[] sans = names.stream().map(IdentitySans::name).toArray(GeneralName[]::new);
        try {
            return issue(spki, sans, ttl);
        } catch (CsrRejectedException e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private Duration effectiveTtl(Duration requested) throws CsrRejectedException {
        if (requested == null || requested.isNegative() || requested.isZero()) {
            return defaultTtl;
        }
        if (requested.compareTo(maxTtl) > 0) {
            throw new CsrRejectedException(Reason.TTL_TOO_LONG, "requested TTL " + requested
                    + " is greater than the max allowed TTL " + maxTtl + " (MAX_WORKLOAD_CERT_TTL)");
        }
        return requested;
    }

    /**
     * notAfter is clamped to the earliest notAfter on the CA chain: a leaf cannot outlive what
     * it chains to. istiod only clamps its default TTL (at start, to the plugged-in chain) and
     * leaves explicit requests unclamped.
     */
    private IssuedChain issue(SubjectPublicKeyInfo spki, GeneralName[] sans, Duration ttl) throws CsrRejectedException {
        Signer s = signer.get();
        Instant now = clock.instant().truncatedTo(ChronoUnit.SECONDS); // X.509 times have second precision
        if (!now.isBefore(s.chainNotAfter())) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "the CA certificate chain ("
                    + s.material().origin() + ") expired at " + s.chainNotAfter() + "; rotate or replace the CA");
        }
        Instant notBefore = now.minus(CLOCK_SKEW_GRACE);
        Instant wanted = now.plus(ttl);
        Instant notAfter = wanted.isAfter(s.chainNotAfter()) ? s.chainNotAfter() : wanted;
        BigInteger serial = CertIds.serial(random);
        try {
            X509v3CertificateBuilder b = new X509v3CertificateBuilder(s.issuer(), serial, Date.from(notBefore),
                    Date.from(notAfter), EMPTY_SUBJECT, spki);
            b.addExtension(Extension.basicConstraints, true, new BasicConstraints(false));
            b.addExtension(Extension.keyUsage, true, new KeyUsage(KeyUsage.digitalSignature | KeyUsage.keyEncipherment));
            b.addExtension(Extension.extendedKeyUsage, false, SERVER_AND_CLIENT);
            b.addExtension(Extension.subjectKeyIdentifier, false, new SubjectKeyIdentifier(CertIds.keyId(spki)));
            b.addExtension(Extension.authorityKeyIdentifier, false, s.authorityKeyId());
            // critical because the subject is empty (RFC 5280 4.2.1.6, SPIFFE X.509-SVID)
            b.addExtension(Extension.subjectAlternativeName, true, new GeneralNames(sans));
            X509CertificateHolder leaf = b.build(s.contentSigner().build(s.material().signingKey()));
            List<String> chain = new ArrayList<>(s.chainPem().size() + 1);
            chain.add(Pem.certificate(leaf.getEncoded()));
            chain.addAll(s.chainPem());
            return new IssuedChain(chain, s.rootsPem(), serial, notBefore, notAfter);
        } catch (Exception e) { // CertIOException, OperatorCreationException, IOException, provider runtime errors
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "signing failed with the " + s.material().origin()
                    + " CA: " + e.getMessage(), e);
        }
    }

    private static Duration positive(Duration d, String what) {
        Objects.requireNonNull(d, what);
        if (d.isNegative() || d.isZero()) {
            throw new IllegalArgumentException(what + " must be positive, got " + d);
        }
        return d;
    }

    /** Everything derived once per material, so that each signing only builds the leaf. */
    private record Signer(CaMaterial material, X500Name issuer, AuthorityKeyIdentifier authorityKeyId,
                          List<String> chainPem, String rootsPem, Instant chainNotAfter,
                          JcaContentSignerBuilder contentSigner) {
        static Signer of(CaMaterial m) {
            Objects.requireNonNull(m, "material");
            X509Certificate signing = m.signingCertificate();
            List<X509Certificate> above = m.chainAboveLeaf();
            Instant notAfter = above.stream().map(c -> c.getNotAfter().toInstant())
                    .min(Comparator.naturalOrder()).orElseThrow();
            return new Signer(m,
                    // the exact encoded subject, so that issuer and subject match byte for byte
                    X500Name.getInstance(signing.getSubjectX500Principal().getEncoded()),
                    new AuthorityKeyIdentifier(CertIds.keyId(signing)),
                    above.stream().map(Pem::certificate).toList(),
                    m.rootCertsPem(),
                    notAfter,
                    new JcaContentSignerBuilder(KeyPolicy.signatureAlgorithm(signing.getPublicKey())));
        }
    }
}
