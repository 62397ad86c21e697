package io.meshpilot.security.credentials;

import java.util.Objects;
import java.util.Optional;

/**
 * One TLS credential, as a Kubernetes Secret holds it for a Gateway's {@code credentialName}:
 * a certificate chain and its private key, and/or a CA bundle for verifying peers. Immutable;
 * PEM text exactly as the Secret held it (what Envoy gets inline). Validated when loaded: the
 * PEM parses and the key belongs to the chain's first certificate.
 *
 * <p>{@link #certificateChain} and {@link #privateKey} are both present or both null (a
 * CA-only Secret, e.g. {@code <name>-cacert}); {@link #caCertificate} is null when the Secret
 * has none. At least one of the two parts is present. {@link #toString()} never prints the key.
 *
 * @param namespace        the Secret's namespace
 * @param name             the Secret's name
 * @param certificateChain PEM, leaf first ({@code tls.crt} or {@code cert}); null when CA-only
 * @param privateKey       PEM ({@code tls.key} or {@code key}); null when CA-only
 * @param caCertificate    PEM ({@code ca.crt} or {@code cacert}); null when absent
 * @param source           where it came from (a file name, or "kubernetes"), for logs
 */
public record Credential(String namespace, String name, String certificateChain, String privateKey,
                         String caCertificate, String source) {

    public Credential {
        Objects.requireNonNull(namespace, "namespace");
        Objects.requireNonNull(name, "name");
        if ((certificateChain == null) != (privateKey == null)) {
            throw new IllegalArgumentException("certificate chain and private key come together");
        }
        if (certificateChain == null && caCertificate == null) {
            throw new IllegalArgumentException("neither a certificate/key pair nor a CA certificate");
        }
        source = source == null ? "" : source;
    }

    /** Whether it has a certificate chain and private key (a server or client identity). */
    public boolean hasKeyPair() {
        return certificateChain != null;
    }

    /** The CA bundle, when the Secret has one. */
    public Optional<String> ca() {
        return Optional.ofNullable(caCertificate);
    }

    /** Same content (ignoring where it was read from). */
    public boolean sameContent(Credential other) {
        return other != null && namespace.equals(other.namespace) && name.equals(other.name)
                && Objects.equals(certificateChain, other.certificateChain)
                && Objects.equals(privateKey, other.privateKey)
                && Objects.equals(caCertificate, other.caCertificate);
    }

    /** namespace/name */
    public String key() {
        return namespace + "/" + name;
    }

    @Override
    public String toString() {
        return "Credential[" + key() + (hasKeyPair() ? " cert+key" : "") + (caCertificate != null ? " ca" : "")
                + (source.isEmpty() ? "" : " from " + source) + "]";
    }
}
