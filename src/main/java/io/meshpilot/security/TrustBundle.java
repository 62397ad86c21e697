package io.meshpilot.security;

import io.meshpilot.security.ca.Pem;
import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.security.cert.CertificateEncodingException;
import java.security.cert.CertificateException;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The roots workloads and istiod trust (istiod's trust bundle): the CA's roots (during a root
 * rotation, the new and the old), then the PEM certificates of MeshConfig
 * {@code caCertificates}; duplicates once. Immutable; a change makes a new bundle.
 *
 * @param certificates the trusted roots, CA roots first
 * @param sources      where each came from ("ca" or "meshConfig.caCertificates[i]"), same order
 * @param problems     mesh entries that were not usable, with the reason (the rest still apply)
 */
public record TrustBundle(List<X509Certificate> certificates, List<String> sources, List<String> problems) {
    public TrustBundle {
        certificates = List.copyOf(certificates);
        sources = List.copyOf(sources);
        problems = List.copyOf(problems);
    }

    /** The bundle of the CA's roots plus the mesh's extra PEM certificates. */
    public static TrustBundle of(List<X509Certificate> caRoots, List<String> meshPems) {
        Map<String, X509Certificate> byDer = new LinkedHashMap<>();
        Map<String, String> source = new LinkedHashMap<>();
        List<String> problems = new ArrayList<>();
        for (X509Certificate root : caRoots) {
            String key = der(root);
            byDer.putIfAbsent(key, root);
            source.putIfAbsent(key, "ca");
        }
        for (int i = 0; i < meshPems.size(); i++) {
            String where = "meshConfig.caCertificates[" + i + "]";
            try {
                List<X509Certificate> certs = parsePem(meshPems.get(i));
                if (certs.isEmpty()) {
                    problems.add(where + ": no PEM certificate");
                }
                for (X509Certificate c : certs) {
                    String key = der(c);
                    byDer.putIfAbsent(key, c);
                    source.putIfAbsent(key, where);
                }
            } catch (CertificateException | IllegalArgumentException e) {
                problems.add(where + ": " + e.getMessage());
            }
        }
        return new TrustBundle(new ArrayList<>(byDer.values()), new ArrayList<>(source.values()), problems);
    }

    /** All certificates as one PEM document, in bundle order. */
    public String pem() {
        StringBuilder sb = new StringBuilder();
        certificates.forEach(c -> sb.append(Pem.certificate(c)));
        return sb.toString();
    }

    static List<X509Certificate> parsePem(String pem) throws CertificateException {
        List<X509Certificate> out = new ArrayList<>();
        var factory = CertificateFactory.getInstance("X.509");
        for (var c : factory.generateCertificates(new ByteArrayInputStream(pem.getBytes(StandardCharsets.US_ASCII)))) {
            out.add((X509Certificate) c);
        }
        return out;
    }

    private static String der(X509Certificate c) {
        try {
            return Base64.getEncoder().encodeToString(c.getEncoded());
        } catch (CertificateEncodingException e) {
            throw new IllegalArgumentException("cannot encode certificate " + c.getSubjectX500Principal(), e);
        }
    }
}
