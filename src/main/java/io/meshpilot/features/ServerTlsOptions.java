package io.meshpilot.features;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * istiod's TLS flags (pilot/cmd/pilot-discovery/app/cmd.go; pilot/pkg/bootstrap/options.go
 * TLSOptions): its serving certificate from files ({@code --caCertFile}, {@code --tlsCertFile},
 * {@code --tlsKeyFile}, used when all three are set) and the secure gRPC port's protocol
 * ({@code --tls-min-version}, {@code --tls-cipher-suites}, ignored under TLS 1.3 as in Go).
 * Bad values are refused with istiod's messages (options.go TLSMinVersion, TLSCipherSuites).
 *
 * @param caCertFile   --caCertFile: the roots client certificates are verified against; "" unset
 * @param certFile     --tlsCertFile: istiod's certificate chain; "" unset
 * @param keyFile      --tlsKeyFile: its private key; "" unset
 * @param cipherSuites --tls-cipher-suites: Go's (IANA) names; empty = the defaults
 * @param minVersion   --tls-min-version: {@code 1.2} or {@code 1.3}
 */
public record ServerTlsOptions(String caCertFile, String certFile, String keyFile, List<String> cipherSuites,
                               String minVersion) {
    public static final String TLS_1_2 = "1.2";
    public static final String TLS_1_3 = "1.3";
    public static final ServerTlsOptions DEFAULTS = new ServerTlsOptions("", "", "", List.of(), TLS_1_2);

    /** Go's TLS 1.3 suites: always on when TLS 1.3 is negotiated, whatever --tls-cipher-suites says. */
    private static final List<String> TLS13_SUITES = List.of("TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384",
            "TLS_CHACHA20_POLY1305_SHA256");

    /** The names Go's crypto/tls knows (tls.CipherSuites() and tls.InsecureCipherSuites()), which istiod accepts. */
    private static final Set<String> GO_CIPHER_SUITES = Set.of(
            "TLS_AES_128_GCM_SHA256", "TLS_AES_256_GCM_SHA384", "TLS_CHACHA20_POLY1305_SHA256",
            "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA", "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
            "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256", "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
            "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256", "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
            "TLS_RSA_WITH_RC4_128_SHA", "TLS_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA",
            "TLS_RSA_WITH_AES_256_CBC_SHA", "TLS_RSA_WITH_AES_128_CBC_SHA256", "TLS_RSA_WITH_AES_128_GCM_SHA256",
            "TLS_RSA_WITH_AES_256_GCM_SHA384", "TLS_ECDHE_ECDSA_WITH_RC4_128_SHA", "TLS_ECDHE_RSA_WITH_RC4_128_SHA",
            "TLS_ECDHE_RSA_WITH_3DES_EDE_CBC_SHA", "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256",
            "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA256");

    public ServerTlsOptions {
        cipherSuites = List.copyOf(cipherSuites);
        if (!minVersion.equals(TLS_1_2) && !minVersion.equals(TLS_1_3)) {
            throw new IllegalArgumentException("--tls-min-version: minimum TLS version: " + minVersion
                    + " is not supported. Only " + TLS_1_2 + " and " + TLS_1_3 + " are supported");
        }
        for (String suite : cipherSuites) {
            if (!GO_CIPHER_SUITES.contains(suite)) {
                throw new IllegalArgumentException("--tls-cipher-suites: cipher suite " + suite
                        + " not supported or doesn't exist");
            }
        }
    }

    /** istiod's hasCustomTLSCertArgs: the three file flags are all set. */
    public boolean certFilesGiven() {
        return !caCertFile.isEmpty() && !certFile.isEmpty() && !keyFile.isEmpty();
    }

    /** The JSSE protocols of the secure gRPC port. */
    public List<String> protocols() {
        return minVersion.equals(TLS_1_3) ? List.of("TLSv1.3") : List.of("TLSv1.3", "TLSv1.2");
    }

    /**
     * The JSSE cipher suites of the secure gRPC port, or empty for the JDK's defaults: the ones
     * named plus TLS 1.3's (Go negotiates TLS 1.3 with its own suites whatever the list says).
     */
    public List<String> ciphers() {
        if (cipherSuites.isEmpty() || minVersion.equals(TLS_1_3)) {
            return List.of();
        }
        Set<String> all = new LinkedHashSet<>(TLS13_SUITES);
        all.addAll(cipherSuites);
        return new ArrayList<>(all);
    }
}
