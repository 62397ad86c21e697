package io.meshpilot.security.ca;

import io.meshpilot.testing.OpenSsl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPairGenerator;
import java.security.interfaces.ECPublicKey;
import java.security.interfaces.RSAPublicKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SelfSignedCaStoreTest {
    static final SelfSignedOptions EC = SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256);

    @TempDir
    Path work;

    Path state() {
        return work.resolve("state");
    }

    CaMaterial load(SelfSignedOptions opts) {
        return SelfSignedCaStore.loadOrCreate(state(), opts, Clock.systemUTC());
    }

    Map<String, byte[]> snapshot() throws IOException {
        Map<String, byte[]> files = new TreeMap<>();
        try (Stream<Path> s = Files.list(state())) {
            for (Path p : s.toList()) {
                files.put(p.getFileName().toString(), Files.readAllBytes(p));
            }
        }
        return files;
    }

    void assertUnchanged(Map<String, byte[]> before) throws IOException {
        Map<String, byte[]> after = snapshot();
        assertEquals(before.keySet(), after.keySet());
        before.forEach((name, bytes) -> assertArrayEquals(bytes, after.get(name), name));
    }

    @Test
    void startsRacingForOneDirectoryGetOneRoot() throws Exception {
        var pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<CaMaterial>> starts = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                starts.add(pool.submit(() -> load(EC)));
            }
            X509Certificate root = starts.getFirst().get().root();
            for (var f : starts) {
                assertEquals(root, f.get().root(), "every start loads the one root created");
            }
        } finally {
            pool.shutdownNow();
        }
    }

    @Test
    void createdOnceWithIstiodDefaultsThenReusedExactly() throws Exception {
        CaMaterial first = load(SelfSignedOptions.defaults());
        X509Certificate root = first.signingCertificate();
        assertEquals("O=cluster.local", root.getSubjectX500Principal().getName());
        assertEquals(root.getSubjectX500Principal(), root.getIssuerX500Principal());
        assertEquals(Integer.MAX_VALUE, root.getBasicConstraints(), "CA:TRUE without a path length");
        boolean[] usage = root.getKeyUsage();
        assertTrue(usage[5] && usage[6], "keyCertSign and cRLSign");
        assertEquals(2048, ((RSAPublicKey) root.getPublicKey()).getModulus().bitLength());
        assertEquals(Duration.ofHours(87600).plus(CertificateAuthority.CLOCK_SKEW_GRACE),
                Duration.between(root.getNotBefore().toInstant(), root.getNotAfter().toInstant()));
        assertEquals(List.of(), first.chain());
        assertEquals(List.of(root), first.roots());
        assertEquals("self-signed " + state(), first.origin().toString());
        assertEquals("rw-------", PosixFilePermissions.toString(
                Files.getPosixFilePermissions(state().resolve(SelfSignedCaStore.KEY_FILE))));
        assertEquals(List.of("root-ca.lock", "root-cert.pem", "root-key.pem"), List.copyOf(snapshot().keySet()),
                "no marker or temp files (the lock file stays)");

        Map<String, byte[]> files = snapshot();
        CaMaterial second = load(SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256));
        assertArrayEquals(root.getEncoded(), second.signingCertificate().getEncoded());
        assertArrayEquals(first.signingKey().getEncoded(), second.signingKey().getEncoded());
        assertUnchanged(files);

        OpenSsl ossl = new OpenSsl(state());
        String text = ossl.text(SelfSignedCaStore.CERT_FILE);
        assertTrue(text.contains("CA:TRUE"), text);
        assertTrue(text.contains("Certificate Sign, CRL Sign"), text);
        assertEquals(0, ossl.verify(SelfSignedCaStore.CERT_FILE, null, SelfSignedCaStore.CERT_FILE).exit());
        ossl.run("pkey", "-in", SelfSignedCaStore.KEY_FILE, "-noout");
    }

    @Test
    void ecRootAndOrganization() {
        CaMaterial m = load(EC.withOrg("example.org").withTtl(Duration.ofDays(30)));
        assertTrue(m.signingCertificate().getPublicKey() instanceof ECPublicKey);
        assertEquals("O=example.org", m.signingCertificate().getSubjectX500Principal().getName());
        assertEquals("SHA256withECDSA", m.signingCertificate().getSigAlgName());
    }

    @Test
    void corruptedKeyIsAnErrorAndNothingIsTouched() throws Exception {
        load(EC);
        Files.writeString(state().resolve(SelfSignedCaStore.KEY_FILE), "-----BEGIN PRIVATE KEY-----\nZm9v\n-----END PRIVATE KEY-----\n");
        Map<String, byte[]> files = snapshot();
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-key.pem: not a PEM private key"), e.getMessage());
        assertUnchanged(files);
    }

    @Test
    void keyOfAnotherRootIsAnError() throws Exception {
        load(EC);
        Path other = work.resolve("other");
        SelfSignedCaStore.loadOrCreate(other, EC, Clock.systemUTC());
        Files.copy(other.resolve(SelfSignedCaStore.KEY_FILE), state().resolve(SelfSignedCaStore.KEY_FILE),
                StandardCopyOption.REPLACE_EXISTING);
        Map<String, byte[]> files = snapshot();
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-key.pem: private key does not match the certificate in root-cert.pem"),
                e.getMessage());
        assertUnchanged(files);
    }

    @Test
    void corruptedCertificateIsAnError() throws Exception {
        load(EC);
        Files.write(state().resolve(SelfSignedCaStore.CERT_FILE), new byte[] {0, 1, 2, (byte) 0xff});
        Map<String, byte[]> files = snapshot();
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-cert.pem: not a PEM certificate"), e.getMessage());
        assertUnchanged(files);
    }

    @Test
    void certificateWithoutKeyIsAnError() throws Exception {
        load(EC);
        Files.delete(state().resolve(SelfSignedCaStore.KEY_FILE));
        Map<String, byte[]> files = snapshot();
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-key.pem: missing while root-cert.pem exists"), e.getMessage());
        assertUnchanged(files);
    }

    @Test
    void keyWithoutCertificateIsAnError() throws Exception {
        load(EC);
        Files.delete(state().resolve(SelfSignedCaStore.CERT_FILE));
        Map<String, byte[]> files = snapshot();
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-cert.pem: missing while root-key.pem exists"), e.getMessage());
        assertUnchanged(files);
    }

    @Test
    void plainCertificateInsteadOfRootIsAnError() throws Exception {
        CaMaterial m = load(EC);
        KeyPairGenerator gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(256);
        var kp = gen.generateKeyPair();
        IssuedChain leaf = new CertificateAuthority(m).issueServing(kp.getPublic(), List.of("x.example"), Duration.ofHours(1));
        Files.writeString(state().resolve(SelfSignedCaStore.CERT_FILE), leaf.leafPem());
        Files.writeString(state().resolve(SelfSignedCaStore.KEY_FILE), Pem.privateKey(kp.getPrivate()));
        CaLoadException e = assertThrows(CaLoadException.class, () -> load(EC));
        assertTrue(e.getMessage().startsWith("root-cert.pem: ") && e.getMessage().contains("is not a CA"), e.getMessage());
    }

    @Test
    void interruptedCreationIsRedone() throws Exception {
        Files.createDirectories(state());
        Files.writeString(state().resolve(SelfSignedCaStore.CREATING_MARKER), "x");
        Files.writeString(state().resolve(SelfSignedCaStore.KEY_FILE), "half written");
        CaMaterial m = load(EC);
        assertEquals(List.of("root-ca.lock", "root-cert.pem", "root-key.pem"), List.copyOf(snapshot().keySet()));
        assertArrayEquals(m.signingKey().getEncoded(), Pem.readPrivateKey(state().resolve(SelfSignedCaStore.KEY_FILE)).getEncoded());
    }

    @Test
    void expiredRootIsReissuedWithTheSameKeyAtStart() throws Exception {
        CaMaterial m = SelfSignedCaStore.loadOrCreate(state(), EC.withTtl(Duration.ofDays(1)), Clock.systemUTC());
        byte[] key = Files.readAllBytes(state().resolve(SelfSignedCaStore.KEY_FILE));
        Instant later = m.signingCertificate().getNotAfter().toInstant().plus(Duration.ofDays(1));
        CaMaterial renewed = SelfSignedCaStore.loadOrCreate(state(), EC.withTtl(Duration.ofDays(1)),
                Clock.fixed(later, ZoneOffset.UTC));
        assertNotEquals(m.signingCertificate(), renewed.signingCertificate());
        assertEquals(m.signingCertificate().getPublicKey(), renewed.signingCertificate().getPublicKey());
        assertEquals(later.plus(Duration.ofDays(1)), renewed.signingCertificate().getNotAfter().toInstant());
        assertEquals(List.of(renewed.signingCertificate()), renewed.roots(), "the expired root is dropped");
        assertArrayEquals(key, Files.readAllBytes(state().resolve(SelfSignedCaStore.KEY_FILE)));
        assertEquals(Pem.certificate(renewed.signingCertificate()),
                Files.readString(state().resolve(SelfSignedCaStore.CERT_FILE)));
        assertFalse(Files.exists(state().resolve(SelfSignedCaStore.PREVIOUS_ROOTS_FILE)));
    }

    @Test
    void optionsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> SelfSignedOptions.defaults().withRsaKeySize(1024));
        assertThrows(IllegalArgumentException.class, () -> SelfSignedOptions.defaults().withTtl(Duration.ZERO));
        assertThrows(IllegalArgumentException.class, () -> SelfSignedOptions.defaults().withOrg(" "));
    }
}
