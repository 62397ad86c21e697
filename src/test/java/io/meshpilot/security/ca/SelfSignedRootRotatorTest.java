package io.meshpilot.security.ca;

import io.meshpilot.testing.OpenSsl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SelfSignedRootRotatorTest {
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";
    static final SelfSignedOptions EC = SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256);

    @TempDir
    Path work;

    CaMaterial root() {
        return SelfSignedCaStore.loadOrCreate(work.resolve("state"), EC, Clock.systemUTC());
    }

    @Test
    void dueOnlyInTheGracePeriodOrAfterExpiry() {
        X509Certificate root = root().signingCertificate(); // 10 years: grace is the last 2
        SelfSignedRootRotator rotator = new SelfSignedRootRotator(Duration.ofHours(87600), 20);
        Instant notAfter = root.getNotAfter().toInstant();
        assertFalse(rotator.isDue(root, Instant.now()));
        assertFalse(rotator.isDue(root, notAfter.minus(Duration.ofDays(800))));
        assertTrue(rotator.isDue(root, notAfter.minus(Duration.ofDays(700))));
        assertTrue(rotator.isDue(root, notAfter.plusSeconds(1)));
        assertEquals(Optional.empty(), rotator.rotateIfDue(root(), Instant.now()));
    }

    @Test
    void nearExpiryTheRootIsReissuedForTheSameKeyAndSubject() {
        CaMaterial old = root();
        Instant now = old.signingCertificate().getNotAfter().toInstant().minus(Duration.ofDays(365));
        CaMaterial rotated = new SelfSignedRootRotator(Duration.ofDays(3650), 20).rotateIfDue(old, now).orElseThrow();
        X509Certificate fresh = rotated.signingCertificate();
        assertNotEquals(old.signingCertificate().getSerialNumber(), fresh.getSerialNumber());
        assertEquals(old.signingCertificate().getPublicKey(), fresh.getPublicKey());
        assertArrayEquals(old.signingCertificate().getSubjectX500Principal().getEncoded(),
                fresh.getSubjectX500Principal().getEncoded());
        assertArrayEquals(CertIds.keyId(old.signingCertificate()), CertIds.keyId(fresh));
        assertEquals(now.plus(Duration.ofDays(3650)).getEpochSecond(), fresh.getNotAfter().toInstant().getEpochSecond());
        assertEquals(List.of(fresh, old.signingCertificate()), rotated.roots());
        assertEquals(old.signingKey(), rotated.signingKey());
    }

    /** Grace 100%: always due, so every certificate is valid now and openssl can check them. */
    @Test
    void leavesFromTheOldRootVerifyAgainstTheNewAndBack() throws Exception {
        CaMaterial old = root();
        CertificateAuthority ca = new CertificateAuthority(old);
        OpenSsl ossl = new OpenSsl(work);
        String csr = ossl.ecCsr("w", "prime256v1", null);
        IssuedChain before = ca.sign(csr, List.of(ID), null);

        CaMaterial rotated = new SelfSignedRootRotator(Duration.ofDays(3650), 100)
                .rotateAndSave(old, work.resolve("state"), Instant.now()).orElseThrow();
        ca.update(rotated);
        IssuedChain after = ca.sign(csr, List.of(ID), null);
        assertEquals(Pem.certificate(rotated.signingCertificate()), after.certChain().getLast());
        assertEquals(Pem.certificate(rotated.signingCertificate()) + Pem.certificate(old.signingCertificate()),
                after.istioResponseChain().getLast());

        ossl.write("new-root.pem", Pem.certificate(rotated.signingCertificate()));
        ossl.write("old-root.pem", Pem.certificate(old.signingCertificate()));
        ossl.write("before.pem", before.leafPem());
        ossl.write("after.pem", after.leafPem());
        for (String[] pair : new String[][] {{"new-root.pem", "before.pem"}, {"old-root.pem", "after.pem"},
                {"new-root.pem", "after.pem"}}) {
            OpenSsl.Result v = ossl.verify(pair[0], null, pair[1]);
            assertEquals(0, v.exit(), String.join(" ", pair) + ": " + v.output());
        }
    }

    @Test
    void aRootRotatedByAnotherInstanceIsAdoptedNotRotatedAgain() throws Exception {
        CaMaterial mine = root();
        Path state = work.resolve("state");
        // another instance sharing the directory rotates first
        CaMaterial theirs = new SelfSignedRootRotator(Duration.ofDays(3650), 100)
                .rotateAndSave(mine, state, Instant.now()).orElseThrow();
        // our check (not due for a fresh root at 20%) adopts theirs instead of writing over it
        CaMaterial adopted = new SelfSignedRootRotator(Duration.ofDays(3650), 20)
                .rotateAndSave(mine, state, Instant.now()).orElseThrow();
        assertEquals(theirs.signingCertificate(), adopted.signingCertificate());
        assertEquals(List.of(theirs.signingCertificate(), mine.signingCertificate()), adopted.roots());
    }

    @Test
    void aKeyReplacedOnDiskIsNeverOverwrittenWithARootForTheOldKey() throws Exception {
        CaMaterial mine = root();
        Path state = work.resolve("state");
        Path other = work.resolve("other");
        SelfSignedCaStore.loadOrCreate(other, EC, Clock.systemUTC());
        for (String f : List.of(SelfSignedCaStore.KEY_FILE, SelfSignedCaStore.CERT_FILE)) {
            Files.copy(other.resolve(f), state.resolve(f), StandardCopyOption.REPLACE_EXISTING);
        }
        byte[] cert = Files.readAllBytes(state.resolve(SelfSignedCaStore.CERT_FILE));
        var e = Assertions.assertThrows(CaLoadException.class, () ->
                new SelfSignedRootRotator(Duration.ofDays(3650), 100).rotateAndSave(mine, state, Instant.now()));
        assertTrue(e.getMessage().contains("changed on disk"), e.getMessage());
        assertArrayEquals(cert, Files.readAllBytes(state.resolve(SelfSignedCaStore.CERT_FILE)));
    }

    @Test
    void rotationIsPersistedAndReloaded() throws Exception {
        CaMaterial old = root();
        Path state = work.resolve("state");
        byte[] key = Files.readAllBytes(state.resolve(SelfSignedCaStore.KEY_FILE));
        CaMaterial rotated = new SelfSignedRootRotator(Duration.ofDays(3650), 100)
                .rotateAndSave(old, state, Instant.now()).orElseThrow();
        assertArrayEquals(key, Files.readAllBytes(state.resolve(SelfSignedCaStore.KEY_FILE)), "the key is never rewritten");

        CaMaterial reloaded = SelfSignedCaStore.loadOrCreate(state, EC, Clock.systemUTC());
        assertEquals(rotated.signingCertificate(), reloaded.signingCertificate());
        assertEquals(rotated.roots(), reloaded.roots());
        assertEquals(List.of(".", "previous-root-certs.pem", "root-ca.lock", "root-cert.pem", "root-key.pem"),
                Files.walk(state).map(p -> state.relativize(p).toString()).map(s -> s.isEmpty() ? "." : s).sorted().toList());
    }

    @Test
    void pluggedInMaterialIsNeverRotated() {
        CaMaterial self = root();
        CaMaterial plugged = new CaMaterial(self.signingCertificate(), self.signingKey(), List.of(), self.roots(),
                new CaMaterial.Origin(CaMaterial.Kind.PLUGGED_IN, work));
        assertEquals(Optional.empty(), new SelfSignedRootRotator(Duration.ofDays(3650), 100).rotateIfDue(plugged, Instant.now()));
    }

    @Test
    void istiodDefaults() {
        assertEquals(Duration.ofHours(1), SelfSignedRootRotator.DEFAULT_CHECK_INTERVAL);
        assertEquals(20, SelfSignedRootRotator.DEFAULT_GRACE_PERIOD_PERCENTILE);
        assertEquals(Duration.ofHours(87600), SelfSignedOptions.DEFAULT_TTL);
    }
}
