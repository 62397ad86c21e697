package io.meshpilot.security.ca;

import io.meshpilot.testing.OpenSsl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.meshpilot.security.ca.CsrRejectedException.Reason;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class CertificateAuthorityTest {
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";

    @TempDir
    static Path shared;
    static CaMaterial rsaCa;
    static CaMaterial ecCa;
    static OpenSsl csrs;

    @TempDir
    Path dir;

    @BeforeAll
    static void cas() throws Exception {
        rsaCa = SelfSignedCaStore.loadOrCreate(shared.resolve("rsa"), SelfSignedOptions.defaults(), Clock.systemUTC());
        ecCa = SelfSignedCaStore.loadOrCreate(shared.resolve("ec"),
                SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256), Clock.systemUTC());
        Files.createDirectories(shared.resolve("csrs"));
        csrs = new OpenSsl(shared.resolve("csrs"));
    }

    static CertificateAuthority ca(CaMaterial m) {
        return new CertificateAuthority(m);
    }

    @ParameterizedTest(name = "CA {0}, CSR {1}, SAN in CSR {2}")
    @CsvSource({"RSA,rsa,false", "RSA,ec,true", "EC,rsa,true", "EC,ec,false", "EC,p384,true"})
    void signsOpensslCsrsThatOpensslVerifies(String caType, String csrType, boolean withSan) throws Exception {
        OpenSsl ossl = new OpenSsl(dir);
        String san = withSan ? "URI:" + ID : null;
        String csr = switch (csrType) {
            case "rsa" -> ossl.rsaCsr("w", 2048, san);
            case "ec" -> ossl.ecCsr("w", "prime256v1", san);
            default -> ossl.ecCsr("w", "secp384r1", san);
        };
        CaMaterial m = caType.equals("RSA") ? rsaCa : ecCa;
        IssuedChain chain = ca(m).sign(csr, List.of(ID), Duration.ofHours(1));

        assertEquals(2, chain.certChain().size(), "leaf + self-signed root");
        OpenSsl.Result v = ossl.verifyChain(chain);
        assertEquals(0, v.exit(), v.output());
        assertTrue(v.output().contains("leaf.pem: OK"), v.output());

        String text = ossl.text("leaf.pem");
        assertTrue(text.contains("CA:FALSE"), text);
        assertTrue(text.contains("X509v3 Basic Constraints: critical"), text);
        assertTrue(text.contains("X509v3 Key Usage: critical"), text);
        assertTrue(text.contains("Digital Signature, Key Encipherment"), text);
        assertTrue(text.contains("TLS Web Server Authentication, TLS Web Client Authentication"), text);
        assertTrue(text.contains("X509v3 Subject Alternative Name: critical"), text);
        assertTrue(text.contains("URI:" + ID), text);
        assertTrue(text.contains("X509v3 Subject Key Identifier"), text);
        assertTrue(text.contains("X509v3 Authority Key Identifier"), text);
        assertTrue(text.contains(caType.equals("RSA") ? "sha256WithRSAEncryption" : "ecdsa-with-SHA256"), text);

        X509Certificate leaf = chain.leafCertificate();
        assertEquals(Duration.ofHours(1).plus(CertificateAuthority.CLOCK_SKEW_GRACE),
                Duration.between(leaf.getNotBefore().toInstant(), leaf.getNotAfter().toInstant()));
        assertEquals("", leaf.getSubjectX500Principal().getName());
        assertEquals(m.signingCertificate().getSubjectX500Principal(), leaf.getIssuerX500Principal());
        assertEquals(chain.serialNumber(), leaf.getSerialNumber());
        assertTrue(leaf.getSerialNumber().signum() > 0);
        assertTrue(leaf.getSerialNumber().bitLength() <= 128);
    }

    @Test
    void sanIsExactlyTheIdentities() throws Exception {
        OpenSsl ossl = new OpenSsl(dir);
        String csr = ossl.ecCsr("w", "prime256v1", null);
        List<String> ids = List.of(ID, "spiffe://cluster.local/ns/default/sa/other", ID);
        X509Certificate leaf = ca(ecCa).sign(csr, ids, null).leafCertificate();
        Collection<List<?>> sans = leaf.getSubjectAlternativeNames();
        assertEquals(List.of(List.of(6, ID), List.of(6, "spiffe://cluster.local/ns/default/sa/other")),
                sans.stream().map(l -> List.copyOf(l)).toList(), "URI SANs, duplicates dropped, order kept");
    }

    @Test
    void ttlDefaultsWhenNotPositiveAndMaxIsInclusive() throws Exception {
        String csr = csrs.ecCsr("ttl", "prime256v1", null);
        CertificateAuthority ca = new CertificateAuthority(ecCa, Duration.ofHours(24), Duration.ofHours(48), Clock.systemUTC());
        for (Duration requested : new Duration[] {null, Duration.ZERO, Duration.ofSeconds(-5)}) {
            IssuedChain c = ca.sign(csr, List.of(ID), requested);
            assertEquals(Duration.ofHours(24), Duration.between(c.notBefore(), c.notAfter()).minus(CertificateAuthority.CLOCK_SKEW_GRACE));
        }
        IssuedChain max = ca.sign(csr, List.of(ID), Duration.ofHours(48));
        assertEquals(Duration.ofHours(48), Duration.between(max.notBefore(), max.notAfter()).minus(CertificateAuthority.CLOCK_SKEW_GRACE));

        CsrRejectedException e = assertThrows(CsrRejectedException.class,
                () -> ca.sign(csr, List.of(ID), Duration.ofHours(48).plusSeconds(1)));
        assertEquals(Reason.TTL_TOO_LONG, e.reason());
        assertTrue(e.reason().callerError());
        assertEquals("TTL_ERROR", e.reason().istioErrorType());
        assertTrue(e.getMessage().contains("max allowed TTL"), e.getMessage());
    }

    @Test
    void defaultsAreIstiods() throws Exception {
        CertificateAuthority ca = new CertificateAuthority(ecCa);
        assertEquals(Duration.ofHours(24), ca.defaultTtl());
        assertEquals(Duration.ofHours(2160), ca.maxTtl());
        String csr = csrs.ecCsr("ttl", "prime256v1", null);
        assertEquals(Reason.TTL_TOO_LONG, assertThrows(CsrRejectedException.class,
                () -> ca.sign(csr, List.of(ID), Duration.ofHours(2161))).reason());
    }

    @Test
    void notAfterNeverPassesTheCaCertificate() throws Exception {
        CaMaterial shortLived = SelfSignedCaStore.loadOrCreate(dir.resolve("short"),
                SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256).withTtl(Duration.ofHours(2)),
                Clock.systemUTC());
        String csr = csrs.ecCsr("clamp", "prime256v1", null);
        IssuedChain c = ca(shortLived).sign(csr, List.of(ID), Duration.ofHours(24));
        assertEquals(shortLived.signingCertificate().getNotAfter().toInstant(), c.notAfter());
        assertEquals(c.notAfter(), c.leafCertificate().getNotAfter().toInstant());
    }

    @Test
    void expiredCaRefusesToSign() throws Exception {
        Instant later = ecCa.signingCertificate().getNotAfter().toInstant().plusSeconds(1);
        CertificateAuthority ca = new CertificateAuthority(ecCa, Duration.ofHours(24), Duration.ofHours(48),
                Clock.fixed(later, ZoneOffset.UTC));
        CsrRejectedException e = assertThrows(CsrRejectedException.class,
                () -> ca.sign(csrs.ecCsr("exp", "prime256v1", null), List.of(ID), null));
        assertEquals(Reason.SIGNING_FAILED, e.reason());
        assertTrue(!e.reason().callerError());
        assertEquals("CERT_GEN_ERROR", e.reason().istioErrorType());
        assertTrue(e.getMessage().contains("expired"), e.getMessage());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"rsa1024,rsa:1024,", "secp256k1,ec,secp256k1", "p521,ec,secp521r1", "ed25519,ed25519,"})
    void rejectsUnsupportedKeys(String name, String keySpec, String curve) {
        String csr = new OpenSsl(dir).csr(name, keySpec, curve == null || curve.isEmpty() ? null : curve, null);
        CsrRejectedException e = assertThrows(CsrRejectedException.class, () -> ca(ecCa).sign(csr, List.of(ID), null));
        assertEquals(Reason.UNSUPPORTED_KEY, e.reason(), e.getMessage());
        String expected = switch (name) {
            case "rsa1024" -> "RSA key of 1024 bits";
            case "secp256k1" -> "secp256k1";
            case "p521" -> "secp521r1";
            default -> "Ed25519";
        };
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void rejectsSansTheCallerDoesNotHold() {
        OpenSsl ossl = new OpenSsl(dir);
        for (String san : List.of("URI:spiffe://cluster.local/ns/other/sa/evil",
                "URI:" + ID + ",DNS:evil.example.com",
                "DNS:bookinfo.default.svc",
                "IP:10.0.0.1")) {
            String csr = ossl.ecCsr("foreign", "prime256v1", san);
            CsrRejectedException e = assertThrows(CsrRejectedException.class, () -> ca(ecCa).sign(csr, List.of(ID), null), san);
            assertEquals(Reason.SAN_NOT_ALLOWED, e.reason());
            assertTrue(e.getMessage().contains("not among the caller's identities"), e.getMessage());
        }
    }

    @Test
    void rejectsMissingOrInvalidIdentities() throws Exception {
        String csr = csrs.ecCsr("id", "prime256v1", null);
        CertificateAuthority ca = ca(ecCa);
        assertEquals(Reason.NO_IDENTITY, assertThrows(CsrRejectedException.class, () -> ca.sign(csr, List.of(), null)).reason());
        assertEquals(Reason.NO_IDENTITY, assertThrows(CsrRejectedException.class, () -> ca.sign(csr, null, null)).reason());
        for (String bad : new String[] {"", "spiffe://cluster.local/ns/a b", "spiffe://clüster.local/ns/a/sa/b", "x\ny"}) {
            assertEquals(Reason.INVALID_IDENTITY,
                    assertThrows(CsrRejectedException.class, () -> ca.sign(csr, List.of(bad), null)).reason(), bad);
        }
    }

    @Test
    void rejectsMalformedInput() throws Exception {
        CertificateAuthority ca = ca(ecCa);
        byte[] garbage = new byte[600];
        new Random(7).nextBytes(garbage);
        String garbagePem = "-----BEGIN CERTIFICATE REQUEST-----\n"
                + Base64.getMimeEncoder().encodeToString(garbage) + "\n-----END CERTIFICATE REQUEST-----\n";
        String valid = csrs.ecCsr("m", "prime256v1", null);
        for (String bad : List.of(" ", "hello", "-----BEGIN CERTIFICATE REQUEST-----\n!!!!\n-----END CERTIFICATE REQUEST-----\n",
                garbagePem, valid.substring(0, valid.length() / 2), valid.replace("REQUEST", "REQUETS"),
                Pem.certificate(ecCa.signingCertificate()))) {
            CsrRejectedException e = assertThrows(CsrRejectedException.class, () -> ca.sign(bad, List.of(ID), null), bad);
            assertEquals(Reason.MALFORMED_CSR, e.reason(), e.getMessage());
        }
    }

    @Test
    void rejectsTamperedSignature() throws Exception {
        for (String csr : List.of(csrs.rsaCsr("t1", 2048, null), csrs.ecCsr("t2", "prime256v1", "URI:" + ID))) {
            byte[] der = der(csr);
            der[der.length - 1] ^= 0x01; // last byte of the signature BIT STRING
            CsrRejectedException e = assertThrows(CsrRejectedException.class,
                    () -> ca(ecCa).sign(pem(der), List.of(ID), null));
            assertEquals(Reason.BAD_CSR_SIGNATURE, e.reason(), e.getMessage());
        }
    }

    @Test
    void rejectsOversizedCsr() {
        String big = "-----BEGIN CERTIFICATE REQUEST-----\n" + "A".repeat(CertificateAuthority.MAX_CSR_BYTES)
                + "\n-----END CERTIFICATE REQUEST-----\n";
        CsrRejectedException e = assertThrows(CsrRejectedException.class, () -> ca(ecCa).sign(big, List.of(ID), null));
        assertEquals(Reason.TOO_LARGE, e.reason());
        String multiByte = "\u00e9".repeat(CertificateAuthority.MAX_CSR_BYTES / 2 + 1);
        assertEquals(Reason.TOO_LARGE, assertThrows(CsrRejectedException.class,
                () -> ca(ecCa).sign(multiByte, List.of(ID), null)).reason());
    }

    /** Random corruption of a real CSR: the only way out is a result or a CsrRejectedException. */
    @Test
    void fuzzedCsrsNeverEscapeAsRuntimeExceptions() throws Exception {
        Random random = new Random(42);
        CertificateAuthority ca = ca(ecCa);
        byte[] good = der(csrs.rsaCsr("fz", 2048, "URI:" + ID));
        int rejected = 0;
        for (int i = 0; i < 400; i++) {
            byte[] der = good.clone();
            switch (i % 4) {
                case 0 -> der[random.nextInt(der.length)] ^= (byte) (1 + random.nextInt(255));
                case 1 -> der = Arrays.copyOf(der, random.nextInt(der.length));
                case 2 -> {
                    int at = random.nextInt(der.length);
                    der[at] = (byte) random.nextInt(256);
                    der[random.nextInt(der.length)] = (byte) 0xff;
                }
                default -> {
                    der = new byte[1 + random.nextInt(300)];
                    random.nextBytes(der);
                    der[0] = 0x30; // looks like a SEQUENCE
                }
            }
            try {
                ca.sign(pem(der), List.of(ID), null);
            } catch (CsrRejectedException e) {
                rejected++;
            } catch (RuntimeException e) {
                fail("input " + i + " escaped as " + e, e);
            }
        }
        assertTrue(rejected > 350, "almost every corruption is rejected, got " + rejected);
    }

    @Test
    void servingCertificateForIstiodNames() throws Exception {
        KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(new ECGenParameterSpec("secp256r1"));
        KeyPair kp = gen.generateKeyPair();
        IssuedChain chain = ca(rsaCa).issueServing(kp.getPublic(),
                List.of("istiod.istio-system.svc", "istiod.istio-system.svc.cluster.local", "localhost"), Duration.ofDays(365));
        X509Certificate leaf = chain.leafCertificate();
        assertEquals(List.of(List.of(2, "istiod.istio-system.svc"), List.of(2, "istiod.istio-system.svc.cluster.local"),
                        List.of(2, "localhost"), List.of(7, "127.0.0.1"), List.of(7, "0:0:0:0:0:0:0:1")),
                leaf.getSubjectAlternativeNames().stream().map(l -> List.copyOf(l)).toList());
        assertEquals(List.of("1.3.6.1.5.5.7.3.1", "1.3.6.1.5.5.7.3.2"), leaf.getExtendedKeyUsage());
        leaf.verify(rsaCa.signingCertificate().getPublicKey());

        OpenSsl ossl = new OpenSsl(dir);
        ossl.write("leaf.pem", chain.leafPem());
        ossl.write("root.pem", chain.certChain().getLast());
        OpenSsl.Result v = ossl.tryRun("verify", "-x509_strict", "-purpose", "sslserver", "-CAfile", "root.pem", "leaf.pem");
        assertEquals(0, v.exit(), v.output());
    }

    @Test
    void istioResponseEndsWithAllRoots() throws Exception {
        IssuedChain c = ca(ecCa).sign(csrs.ecCsr("r", "prime256v1", null), List.of(ID), null);
        assertEquals(List.of(c.leafPem(), ecCa.rootCertsPem()), c.istioResponseChain());
        assertTrue(c.leafPem().endsWith("-----END CERTIFICATE-----\n"));
    }

    @Test
    void updateSwapsTheSigningMaterial() throws Exception {
        CertificateAuthority ca = ca(ecCa);
        String csr = csrs.ecCsr("swap", "prime256v1", null);
        ca.update(rsaCa);
        IssuedChain c = ca.sign(csr, List.of(ID), null);
        c.leafCertificate().verify(rsaCa.signingCertificate().getPublicKey());
        assertEquals(rsaCa, ca.material());
    }

    @Test
    void concurrentSigningGivesDistinctValidCertificates() throws Exception {
        CertificateAuthority ca = ca(ecCa);
        String csr = csrs.ecCsr("conc", "prime256v1", "URI:" + ID);
        ExecutorService pool = Executors.newFixedThreadPool(8);
        try {
            List<Future<List<IssuedChain>>> futures = new ArrayList<>();
            for (int t = 0; t < 8; t++) {
                futures.add(pool.submit(() -> {
                    List<IssuedChain> out = new ArrayList<>();
                    for (int i = 0; i < 25; i++) {
                        out.add(ca.sign(csr, List.of(ID), null));
                    }
                    return out;
                }));
            }
            Set<BigInteger> serials = new HashSet<>();
            for (Future<List<IssuedChain>> f : futures) {
                for (IssuedChain c : f.get()) {
                    c.leafCertificate().verify(ecCa.signingCertificate().getPublicKey());
                    serials.add(c.serialNumber());
                }
            }
            assertEquals(200, serials.size());
        } finally {
            pool.shutdownNow();
        }
    }

    static byte[] der(String pem) {
        String b64 = pem.replaceAll("-----[A-Z ]+-----", "").replaceAll("\\s", "");
        return Base64.getDecoder().decode(b64);
    }

    static String pem(byte[] der) {
        return "-----BEGIN CERTIFICATE REQUEST-----\n"
                + new String(Base64.getMimeEncoder(64, new byte[] {'\n'}).encode(der), StandardCharsets.US_ASCII)
                + "\n-----END CERTIFICATE REQUEST-----\n";
    }
}
