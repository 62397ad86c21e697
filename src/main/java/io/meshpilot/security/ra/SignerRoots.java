package io.meshpilot.security.ra;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.security.ca.CsrRejectedException;
import io.meshpilot.security.ca.CsrRejectedException.Reason;
import io.meshpilot.security.ca.Pem;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Where RA mode finds the root a signer's certificates chain to, first match wins:
 * meshConfig {@code caCertificates} entries whose {@code certSigners} name the signer (read on
 * every request, so a mesh change applies at once); else the first readable root file (istiod's
 * {@code ./etc/external-ca-cert/root-cert.pem}, then the service account's {@code ca.crt});
 * else a self-signed certificate the signer itself returned at the end of the chain.
 */
public final class SignerRoots {
    /** istiod's root file for an external CA, relative to the working directory as in istiod. */
    public static final Path EXTERNAL_CA_ROOT = Path.of("etc/external-ca-cert/root-cert.pem");
    /** The cluster CA istiod falls back to. */
    public static final Path SERVICE_ACCOUNT_CA = Path.of("/var/run/secrets/kubernetes.io/serviceaccount/ca.crt");

    /** The roots found and where they came from (for error messages). */
    public record Bundle(List<X509Certificate> roots, String source) {
        public Bundle {
            roots = List.copyOf(roots);
        }
    }

    private final Supplier<MeshConfig> mesh;
    private final List<Path> rootFiles;

    public SignerRoots(Supplier<MeshConfig> mesh, List<Path> rootFiles) {
        this.mesh = mesh;
        this.rootFiles = List.copyOf(rootFiles);
    }

    /**
     * @param issued what the signer wrote to the CSR's status, for a root it included itself
     * @throws CsrRejectedException when no root is configured or found, or a configured one does not parse
     */
    Bundle forSigner(String signerName, List<X509Certificate> issued) throws CsrRejectedException {
        Optional<Bundle> configured = fromMeshConfig(signerName);
        if (configured.isPresent()) {
            return configured.get();
        }
        for (Path file : rootFiles) {
            if (Files.isReadable(file)) {
                String text;
                try {
                    text = Files.readString(file, StandardCharsets.US_ASCII);
                } catch (IOException e) {
                    throw new CsrRejectedException(Reason.SIGNING_FAILED, "root file " + file + " for signer "
                            + signerName + " cannot be read: " + e.getMessage(), e);
                }
                return new Bundle(parse(text, file.toString(), signerName), file.toString());
            }
        }
        List<X509Certificate> included = issued.stream().filter(KubernetesRa::selfSigned).toList();
        if (!included.isEmpty()) {
            return new Bundle(included, "the root signer " + signerName + " included in its chain");
        }
        throw new CsrRejectedException(Reason.SIGNING_FAILED, "no root certificate for signer " + signerName
                + ": add its root to meshConfig.caCertificates with certSigners [" + signerName + "], or to "
                + EXTERNAL_CA_ROOT);
    }

    /**
     * The root MeshConfig {@code caCertificates} configures for {@code signerName} (istiod's
     * GetRootCertFromMeshConfig: the only place istiod reads the root of its own certificate's
     * signer from); empty when no entry names it.
     *
     * @throws CsrRejectedException when the entry does not parse
     */
    public Optional<Bundle> fromMeshConfig(String signerName) throws CsrRejectedException {
        MeshConfig m = mesh.get();
        for (int i = 0; i < m.getCaCertificatesCount(); i++) {
            var entry = m.getCaCertificates(i);
            if (entry.hasPem() && entry.getCertSignersList().contains(signerName)) {
                String where = "meshConfig.caCertificates[" + i + "] (certSigners " + entry.getCertSignersList() + ")";
                return Optional.of(new Bundle(parse(entry.getPem(), where, signerName), where));
            }
        }
        return Optional.empty();
    }

    private static List<X509Certificate> parse(String pem, String where, String signerName) throws CsrRejectedException {
        List<X509Certificate> roots;
        try {
            roots = Pem.certificatesIn(pem);
        } catch (RuntimeException e) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "root of signer " + signerName + " in " + where
                    + " does not parse: " + e.getMessage(), e);
        }
        if (roots.isEmpty()) {
            throw new CsrRejectedException(Reason.SIGNING_FAILED, "root of signer " + signerName + " in " + where
                    + " holds no certificate");
        }
        return roots;
    }
}
