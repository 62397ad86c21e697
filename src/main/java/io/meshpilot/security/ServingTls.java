package io.meshpilot.security;

import io.grpc.util.AdvancedTlsX509KeyManager;
import io.grpc.util.AdvancedTlsX509TrustManager;
import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.cert.CertificateException;
import java.security.cert.X509Certificate;
import java.util.List;

/**
 * istiod's serving TLS as JSSE managers that can be swapped while serving (for the grpc-java
 * Netty transport; Helidon sockets reload their own): a renewed certificate or a changed trust
 * bundle applies to new handshakes, and open connections keep their streams.
 */
public final class ServingTls {
    private final AdvancedTlsX509KeyManager keyManager = new AdvancedTlsX509KeyManager();
    private final AdvancedTlsX509TrustManager trustManager;

    public ServingTls(ServingCertificate serving, List<X509Certificate> trust) {
        try {
            trustManager = AdvancedTlsX509TrustManager.newBuilder()
                    .setVerification(AdvancedTlsX509TrustManager.Verification.CERTIFICATE_ONLY_VERIFICATION)
                    .build();
        } catch (CertificateException e) {
            throw new IllegalStateException("cannot create the trust manager: " + e.getMessage(), e);
        }
        update(serving, trust);
    }

    /** The newest certificate and roots for the next handshake. */
    public void update(ServingCertificate serving, List<X509Certificate> trust) {
        keyManager.updateIdentityCredentials(serving.chain().toArray(X509Certificate[]::new), serving.privateKey());
        try {
            trustManager.updateTrustCredentials(trust.toArray(X509Certificate[]::new));
        } catch (GeneralSecurityException | IOException e) {
            throw new IllegalStateException("cannot load the trust bundle: " + e.getMessage(), e);
        }
    }

    public AdvancedTlsX509KeyManager keyManager() {
        return keyManager;
    }

    public AdvancedTlsX509TrustManager trustManager() {
        return trustManager;
    }
}
