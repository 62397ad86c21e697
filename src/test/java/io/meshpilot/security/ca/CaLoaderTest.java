package io.meshpilot.security.ca;

import io.meshpilot.testing.OpenSsl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.function.Consumer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Plugged-in CAs made with openssl, in istiod's two layouts, good and damaged. */
class CaLoaderTest {
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";

    @TempDir
    Path work;
    OpenSsl ossl;

    @BeforeEach
    void pki() {
        ossl = new OpenSsl(work);
        ossl.root("root", "Root CA", "rsa:2048");
        ossl.issue("int", "Intermediate CA", "ec", "root", "v3_int", 730);
    }

    /** istiod's cacerts layout in a fresh directory. */
    Path istiodLayout(String name) throws IOException {
        Path dir = Files.createDirectories(work.resolve(name));
        copy("int-cert.pem", dir, "ca-cert.pem");
        copy("int-key.pem", dir, "ca-key.pem");
        copy("root-cert.pem", dir, "root-cert.pem");
        Files.writeString(dir.resolve("cert-chain.pem"), ossl.read("int-cert.pem") + ossl.read("root-cert.pem"));
        return dir;
    }

    void copy(String from, Path dir, String to) throws IOException {
        Files.copy(work.resolve(from), dir.resolve(to), StandardCopyOption.REPLACE_EXISTING);
    }

    /** Signs an openssl CSR with the material and checks the chain with openssl verify against the root only. */
    void signAndVerify(CaMaterial m, int expectedChainLength) throws Exception {
        Path out = Files.createDirectories(work.resolve("out-" + System.nanoTime()));
        OpenSsl o = new OpenSsl(out);
        String csr = o.rsaCsr("w", 2048, "URI:" + ID);
        IssuedChain chain = new CertificateAuthority(m).sign(csr, List.of(ID), Duration.ofHours(2));
        assertEquals(expectedChainLength, chain.certChain().size());
        OpenSsl.Result v = o.verifyChain(chain);
        assertEquals(0, v.exit(), v.output());
        assertTrue(v.output().contains("leaf.pem: OK"), v.output());
        assertEquals(Pem.certificate(m.root()), chain.certChain().getLast());
    }

    @Test
    void istiodLayoutRootAndIntermediate() throws Exception {
        Path dir = istiodLayout("cacerts");
        assertTrue(CaLoader.hasPluggedIn(dir));
        CaMaterial m = CaLoader.loadPluggedIn(dir);
        X509Certificate root = Pem.readCertificates(work.resolve("root-cert.pem")).getFirst();
        X509Certificate intermediate = Pem.readCertificates(work.resolve("int-cert.pem")).getFirst();
        assertEquals(intermediate, m.signingCertificate());
        assertEquals(List.of(root), m.chain());
        assertEquals(List.of(intermediate, root), m.chainAboveLeaf());
        assertEquals(List.of(root), m.roots());
        assertEquals(CaMaterial.Kind.PLUGGED_IN, m.origin().kind());
        assertEquals("plugged-in " + dir, m.origin().toString());
        signAndVerify(m, 3);
    }

    @Test
    void threeLevelsWithChainInAnyOrder() throws Exception {
        ossl.issue("int2", "Second Intermediate", "rsa:2048", "int", "v3_int", 365);
        Path dir = Files.createDirectories(work.resolve("three"));
        copy("int2-cert.pem", dir, "ca-cert.pem");
        copy("int2-key.pem", dir, "ca-key.pem");
        copy("root-cert.pem", dir, "root-cert.pem");
        Files.writeString(dir.resolve("cert-chain.pem"), ossl.read("root-cert.pem") + ossl.read("int-cert.pem")
                + ossl.read("int2-cert.pem"));
        CaMaterial m = CaLoader.loadPluggedIn(dir);
        assertEquals(3, m.chainAboveLeaf().size());
        assertEquals(m.roots().getFirst(), m.chainAboveLeaf().getLast());
        signAndVerify(m, 4);
    }

    @Test
    void tlsSecretLayoutWithPkcs1Key() throws Exception {
        ossl.issue("rsaint", "RSA Intermediate", "rsa:2048", "root", "v3_int", 365);
        Path dir = Files.createDirectories(work.resolve("tls"));
        copy("rsaint-cert.pem", dir, "tls.crt");
        ossl.run("rsa", "-in", "rsaint-key.pem", "-traditional", "-out", dir.resolve("tls.key").toString());
        assertTrue(Files.readString(dir.resolve("tls.key")).startsWith("-----BEGIN RSA PRIVATE KEY-----"));
        copy("root-cert.pem", dir, "ca.crt");
        assertTrue(CaLoader.hasPluggedIn(dir));
        CaMaterial m = CaLoader.loadPluggedIn(dir);
        assertEquals(2, m.chainAboveLeaf().size());
        signAndVerify(m, 3);
    }

    @Test
    void sec1EcKeyAndNoCertChainFile() throws Exception {
        Path dir = istiodLayout("sec1");
        Files.delete(dir.resolve("cert-chain.pem"));
        ossl.run("ec", "-in", "int-key.pem", "-out", dir.resolve("ca-key.pem").toString());
        assertTrue(Files.readString(dir.resolve("ca-key.pem")).startsWith("-----BEGIN EC PRIVATE KEY-----"));
        signAndVerify(CaLoader.loadPluggedIn(dir), 3);
    }

    @Test
    void rootItselfAsSigningCertificate() throws Exception {
        Path dir = Files.createDirectories(work.resolve("rootonly"));
        copy("root-cert.pem", dir, "ca-cert.pem");
        copy("root-key.pem", dir, "ca-key.pem");
        copy("root-cert.pem", dir, "root-cert.pem");
        copy("root-cert.pem", dir, "cert-chain.pem");
        CaMaterial m = CaLoader.loadPluggedIn(dir);
        assertEquals(List.of(), m.chain());
        signAndVerify(m, 2);
    }

    @Test
    void extraRootsStayInTheTrustBundle() throws Exception {
        ossl.root("other", "Other Root", "ec");
        Path dir = istiodLayout("multi");
        Files.writeString(dir.resolve("root-cert.pem"), ossl.read("other-cert.pem") + ossl.read("root-cert.pem"));
        CaMaterial m = CaLoader.loadPluggedIn(dir);
        assertEquals(2, m.roots().size());
        assertEquals(Pem.readCertificates(work.resolve("root-cert.pem")).getFirst(), m.root());
        assertEquals(ossl.read("other-cert.pem") + ossl.read("root-cert.pem"), m.rootCertsPem());
    }

    @Test
    void noPluggedInWithoutSigningFiles() throws IOException {
        Path empty = Files.createDirectories(work.resolve("empty"));
        assertFalse(CaLoader.hasPluggedIn(empty));
        copy("root-cert.pem", empty, "root-cert.pem");
        assertFalse(CaLoader.hasPluggedIn(empty), "root-cert.pem alone is extra roots for a self-signed CA");
        assertFalse(CaLoader.hasPluggedIn(work.resolve("does-not-exist")));
    }

    // --- damaged material: the error names the file and the reason

    CaLoadException damaged(Consumer<Path> damage) throws IOException {
        return damaged(damage, Clock.systemUTC());
    }

    CaLoadException damaged(Consumer<Path> damage, Clock clock) throws IOException {
        Path dir = istiodLayout("damaged-" + System.nanoTime());
        damage.accept(dir);
        return assertThrows(CaLoadException.class, () -> CaLoader.loadPluggedIn(dir, clock));
    }

    static void write(Path file, String content) {
        try {
            Files.writeString(file, content);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    static void assertNames(CaLoadException e, String file, String reason) {
        assertTrue(e.getMessage().startsWith(file + ": "), e.getMessage());
        assertTrue(e.getMessage().contains(reason), e.getMessage());
        assertEquals(file, e.file().getFileName().toString());
    }

    @Test
    void garbageKey() throws IOException {
        assertNames(damaged(d -> write(d.resolve("ca-key.pem"), "not a key\n")), "ca-key.pem", "not a PEM private key");
        assertNames(damaged(d -> write(d.resolve("ca-key.pem"),
                "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n")), "ca-key.pem", "not a PEM private key");
    }

    @Test
    void keyOfAnotherCertificate() throws IOException {
        assertNames(damaged(d -> write(d.resolve("ca-key.pem"), ossl.read("root-key.pem"))), "ca-key.pem",
                "does not match the certificate in ca-cert.pem");
    }

    @Test
    void encryptedKey() throws IOException {
        assertNames(damaged(d -> ossl.run("pkcs8", "-topk8", "-in", "int-key.pem", "-passout", "pass:secret",
                "-out", d.resolve("ca-key.pem").toString())), "ca-key.pem", "encrypted private keys are not supported");
    }

    @Test
    void garbageCertificate() throws IOException {
        assertNames(damaged(d -> write(d.resolve("ca-cert.pem"), "\u0000\u0001binary")), "ca-cert.pem", "not a PEM certificate");
        assertNames(damaged(d -> write(d.resolve("ca-cert.pem"), ossl.read("int-key.pem"))), "ca-cert.pem",
                "where a CERTIFICATE was expected");
    }

    @Test
    void missingKey() throws IOException {
        Path dir = istiodLayout("nokey");
        Files.delete(dir.resolve("ca-key.pem"));
        assertTrue(CaLoader.hasPluggedIn(dir), "a partial set is an error, not a silent self-signed fallback");
        assertNames(assertThrows(CaLoadException.class, () -> CaLoader.loadPluggedIn(dir)), "ca-key.pem", "missing");
    }

    @Test
    void foreignRoot() throws IOException {
        ossl.root("other", "Other Root", "rsa:2048");
        assertNames(damaged(d -> write(d.resolve("root-cert.pem"), ossl.read("other-cert.pem"))), "cert-chain.pem",
                "is not in root-cert.pem");
        assertNames(damaged(d -> {
            write(d.resolve("root-cert.pem"), ossl.read("other-cert.pem"));
            write(d.resolve("cert-chain.pem"), ossl.read("int-cert.pem"));
        }), "cert-chain.pem", "does not chain to root-cert.pem");
        assertNames(damaged(d -> {
            write(d.resolve("root-cert.pem"), ossl.read("other-cert.pem"));
            uncheckedDelete(d.resolve("cert-chain.pem"));
        }), "ca-cert.pem", "does not chain to root-cert.pem");
    }

    @Test
    void rootThatIsNotSelfSigned() throws IOException {
        ossl.issue("int2", "Second Intermediate", "ec", "int", "v3_int", 365);
        assertNames(damaged(d -> {
            write(d.resolve("ca-cert.pem"), ossl.read("int2-cert.pem"));
            write(d.resolve("ca-key.pem"), ossl.read("int2-key.pem"));
            write(d.resolve("root-cert.pem"), ossl.read("int-cert.pem"));
            write(d.resolve("cert-chain.pem"), ossl.read("int2-cert.pem"));
        }), "root-cert.pem", "is not self-signed");
    }

    @Test
    void signingCertificateThatIsNotACa() throws IOException {
        ossl.issue("leaf", "Not A CA", "ec", "int", "v3_leaf", 365);
        assertNames(damaged(d -> {
            write(d.resolve("ca-cert.pem"), ossl.read("leaf-cert.pem"));
            write(d.resolve("ca-key.pem"), ossl.read("leaf-key.pem"));
        }), "ca-cert.pem", "is not a CA");
        ossl.issue("nosign", "No CertSign", "ec", "root", "v3_no_certsign", 365);
        assertNames(damaged(d -> {
            write(d.resolve("ca-cert.pem"), ossl.read("nosign-cert.pem"));
            write(d.resolve("ca-key.pem"), ossl.read("nosign-key.pem"));
        }), "ca-cert.pem", "keyCertSign");
    }

    @Test
    void weakCaKey() throws IOException {
        ossl.issue("weak", "Weak", "rsa:1024", "root", "v3_int", 365);
        assertNames(damaged(d -> {
            write(d.resolve("ca-cert.pem"), ossl.read("weak-cert.pem"));
            write(d.resolve("ca-key.pem"), ossl.read("weak-key.pem"));
        }), "ca-cert.pem", "RSA key of 1024 bits");
    }

    @Test
    void expiredIntermediate() throws IOException {
        Clock later = Clock.fixed(Instant.now().plus(Duration.ofDays(800)), ZoneOffset.UTC);
        assertNames(damaged(d -> { }, later), "ca-cert.pem", "expired at");
    }

    @Test
    void expiredRoot() throws IOException {
        ossl.root("short", "Short Root", "ec", 1);
        ossl.issue("under", "Under Short Root", "ec", "short", "v3_int", 365);
        Clock later = Clock.fixed(Instant.now().plus(Duration.ofDays(3)), ZoneOffset.UTC);
        assertNames(damaged(d -> {
            write(d.resolve("ca-cert.pem"), ossl.read("under-cert.pem"));
            write(d.resolve("ca-key.pem"), ossl.read("under-key.pem"));
            write(d.resolve("root-cert.pem"), ossl.read("short-cert.pem"));
            write(d.resolve("cert-chain.pem"), ossl.read("under-cert.pem") + ossl.read("short-cert.pem"));
        }, later), "root-cert.pem", "expired at");
    }

    static void uncheckedDelete(Path p) {
        try {
            Files.delete(p);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }
}
