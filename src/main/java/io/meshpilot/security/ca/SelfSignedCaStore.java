package io.meshpilot.security.ca;

import io.meshpilot.util.AtomicFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.StandardOpenOption;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.security.PrivateKey;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Keeps a self-signed root on disk, the file counterpart of istiod's {@code istio-ca-secret}:
 * created on first start, reused exactly afterwards, never replaced behind the operator's back.
 *
 * <p>Files under the state directory: {@code root-cert.pem}, {@code root-key.pem} (0600),
 * {@code previous-root-certs.pem} (earlier roots of the same key, kept in the trust bundle
 * after a rotation until they expire) and, only while a first root is being written,
 * {@code root-ca.creating}. The marker is what tells an interrupted creation (safe to redo:
 * nothing was ever signed with it) from a root someone damaged (an error, files untouched).
 */
public final class SelfSignedCaStore {
    public static final String CERT_FILE = "root-cert.pem";
    public static final String KEY_FILE = "root-key.pem";
    public static final String PREVIOUS_ROOTS_FILE = "previous-root-certs.pem";
    public static final String CREATING_MARKER = "root-ca.creating";
    /** Held while the directory is read or written. */
    public static final String LOCK_FILE = "root-ca.lock";

    private static final System.Logger LOG = System.getLogger(SelfSignedCaStore.class.getName());

    private SelfSignedCaStore() {
    }

    /**
     * The root in {@code stateDir}, created on first use. An expired root is re-issued at once
     * with the same key (what istiod's rotator does at its first check); anything damaged is a
     * {@link CaLoadException} and the files stay as they are.
     */
    public static CaMaterial loadOrCreate(Path stateDir, SelfSignedOptions opts, Clock clock) {
        return locked(stateDir, () -> loadOrCreateLocked(stateDir, opts, clock));
    }

    /**
     * Runs {@code work} holding the state directory's lock: two processes sharing a directory
     * (two instances on one host) must not both create a root, nor take the other's creation
     * in progress for an interrupted one.
     */
    private static <T> T locked(Path stateDir, Supplier<T> work) {
        try {
            createDirectory(stateDir);
        } catch (IOException e) {
            throw new CaLoadException(stateDir, "cannot prepare the CA state directory: " + e.getMessage(), e);
        }
        synchronized (SelfSignedCaStore.class) { // a FileLock is held per process, not per thread
            try (FileChannel channel = FileChannel.open(stateDir.resolve(LOCK_FILE), StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE); FileLock lock = channel.lock()) {
                return work.get();
            } catch (IOException e) {
                throw new CaLoadException(stateDir.resolve(LOCK_FILE), "cannot lock the CA state directory: "
                        + e.getMessage(), e);
            }
        }
    }

    private static CaMaterial loadOrCreateLocked(Path stateDir, SelfSignedOptions opts, Clock clock) {
        Path certFile = stateDir.resolve(CERT_FILE);
        Path keyFile = stateDir.resolve(KEY_FILE);
        Path previousFile = stateDir.resolve(PREVIOUS_ROOTS_FILE);
        try {
            createDirectory(stateDir);
            if (Files.exists(stateDir.resolve(CREATING_MARKER))) {
                LOG.log(System.Logger.Level.WARNING, "an earlier start stopped while creating the root CA in "
                        + stateDir + "; creating it again");
                Files.deleteIfExists(certFile);
                Files.deleteIfExists(keyFile);
                Files.deleteIfExists(previousFile);
                return create(stateDir, opts, clock.instant());
            }
            boolean cert = Files.exists(certFile);
            boolean key = Files.exists(keyFile);
            if (!cert && !key) {
                if (Files.exists(previousFile)) {
                    throw new CaLoadException(previousFile, "present without " + CERT_FILE + " and " + KEY_FILE
                            + "; the root was removed, restore it or remove this file too");
                }
                return create(stateDir, opts, clock.instant());
            }
            if (!key) {
                throw new CaLoadException(keyFile, "missing while " + CERT_FILE + " exists; restore it, or remove "
                        + CERT_FILE + " to create a new root (every workload certificate then changes trust)");
            }
            if (!cert) {
                throw new CaLoadException(certFile, "missing while " + KEY_FILE + " exists; restore it, or remove "
                        + KEY_FILE + " to create a new root (every workload certificate then changes trust)");
            }
        } catch (IOException e) {
            throw new CaLoadException(stateDir, "cannot prepare the CA state directory: " + e.getMessage(), e);
        }
        Instant now = clock.instant();
        CaMaterial loaded = load(stateDir, now);
        if (!now.isBefore(loaded.signingCertificate().getNotAfter().toInstant())) {
            CaMaterial renewed = SelfSignedRoot.reissue(loaded, opts.ttl(), now);
            LOG.log(System.Logger.Level.WARNING, "self-signed root in " + stateDir + " expired at "
                    + loaded.signingCertificate().getNotAfter().toInstant() + "; re-issued it with the same key");
            saveRotatedLocked(stateDir, renewed);
            return renewed;
        }
        return loaded;
    }

    /**
     * Writes a rotated root: the earlier roots first, then the new root-cert.pem, each by
     * atomic rename. A crash in between leaves the old root in both files, which loads fine.
     * The key file is never rewritten.
     */
    public static void saveRotated(Path stateDir, CaMaterial rotated) {
        locked(stateDir, () -> {
            saveRotatedLocked(stateDir, rotated);
            return null;
        });
    }

    private static void saveRotatedLocked(Path stateDir, CaMaterial rotated) {
        if (rotated.origin().kind() != CaMaterial.Kind.SELF_SIGNED) {
            throw new IllegalArgumentException("only a self-signed root is kept in " + stateDir);
        }
        List<X509Certificate> previous = rotated.roots().stream()
                .filter(r -> !r.equals(rotated.signingCertificate())).toList();
        Path previousFile = stateDir.resolve(PREVIOUS_ROOTS_FILE);
        try {
            if (previous.isEmpty()) {
                Files.deleteIfExists(previousFile);
            } else {
                AtomicFiles.write(previousFile, Pem.certificates(previous), false);
            }
            AtomicFiles.write(stateDir.resolve(CERT_FILE), Pem.certificate(rotated.signingCertificate()), false);
        } catch (IOException e) {
            throw new CaLoadException(stateDir.resolve(CERT_FILE), "cannot write the rotated root: " + e.getMessage(), e);
        }
    }

    private static CaMaterial create(Path stateDir, SelfSignedOptions opts, Instant now) throws IOException {
        Path marker = stateDir.resolve(CREATING_MARKER);
        AtomicFiles.write(marker, "root CA creation in progress\n", false);
        KeyPair pair = opts.generateKeyPair();
        X509Certificate cert = SelfSignedRoot.issue(pair.getPublic(), pair.getPrivate(),
                SelfSignedRoot.subjectFor(opts.org()), opts.ttl(), now);
        AtomicFiles.write(stateDir.resolve(KEY_FILE), Pem.privateKey(pair.getPrivate()), true);
        AtomicFiles.write(stateDir.resolve(CERT_FILE), Pem.certificate(cert), false);
        Files.delete(marker);
        AtomicFiles.syncDirectory(stateDir);
        LOG.log(System.Logger.Level.INFO, "created a self-signed root CA in " + stateDir + ": "
                + cert.getSubjectX500Principal() + " until " + cert.getNotAfter().toInstant());
        return new CaMaterial(cert, pair.getPrivate(), List.of(), List.of(cert),
                new CaMaterial.Origin(CaMaterial.Kind.SELF_SIGNED, stateDir));
    }

    /**
     * One root check against what is on disk, under the directory's lock: another instance
     * sharing the directory may have rotated already (then its root is adopted and checked
     * instead of ours), and a key that changed under us is never overwritten with a root for
     * the old key.
     *
     * @return the material to use from now on, or empty when nothing changed
     */
    public static Optional<CaMaterial> checkRotation(Path stateDir, CaMaterial current, SelfSignedRootRotator rotator,
                                                     Instant now) {
        return locked(stateDir, () -> {
            CaMaterial onDisk = load(stateDir, now);
            if (!Arrays.equals(onDisk.signingKey().getEncoded(), current.signingKey().getEncoded())) {
                throw new CaLoadException(stateDir.resolve(KEY_FILE), "changed on disk while this instance runs; "
                        + "not rotating over it (restart to load the new root)");
            }
            boolean adopted = !onDisk.signingCertificate().equals(current.signingCertificate());
            CaMaterial base = adopted ? onDisk : current;
            Optional<CaMaterial> rotated = rotator.rotateIfDue(base, now);
            rotated.ifPresent(m -> saveRotatedLocked(stateDir, m));
            return rotated.isPresent() ? rotated : adopted ? Optional.of(onDisk) : Optional.<CaMaterial>empty();
        });
    }

    private static CaMaterial load(Path stateDir, Instant now) {
        Path certFile = stateDir.resolve(CERT_FILE);
        Path keyFile = stateDir.resolve(KEY_FILE);
        List<X509Certificate> certs = Pem.readCertificates(certFile);
        if (certs.size() != 1) {
            throw new CaLoadException(certFile, "holds " + certs.size() + " certificates, expected the one self-signed root");
        }
        X509Certificate cert = certs.getFirst();
        PrivateKey key = Pem.readPrivateKey(keyFile);
        ChainVerifier.checkSigningPair(cert, certFile, key, keyFile);
        if (!ChainVerifier.selfSigned(cert)) {
            throw new CaLoadException(certFile, "certificate " + cert.getSubjectX500Principal() + " is not self-signed");
        }
        List<X509Certificate> roots = new ArrayList<>(List.of(cert));
        Path previousFile = stateDir.resolve(PREVIOUS_ROOTS_FILE);
        if (Files.exists(previousFile)) {
            for (X509Certificate old : Pem.readCertificates(previousFile)) {
                if (!old.getPublicKey().equals(cert.getPublicKey())) {
                    throw new CaLoadException(previousFile, "certificate " + old.getSubjectX500Principal()
                            + " is not for the key in " + KEY_FILE);
                }
                if (!roots.contains(old) && old.getNotAfter().toInstant().isAfter(now)) {
                    roots.add(old);
                }
            }
        }
        return new CaMaterial(cert, key, List.of(), roots, new CaMaterial.Origin(CaMaterial.Kind.SELF_SIGNED, stateDir));
    }

    private static void createDirectory(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            return;
        }
        if (AtomicFiles.posix(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        } else {
            Files.createDirectories(dir);
        }
    }
}
