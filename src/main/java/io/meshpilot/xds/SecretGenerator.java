package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.Proxy;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.security.SpiffeIdentities;
import io.meshpilot.security.credentials.Credential;
import io.meshpilot.security.credentials.CredentialStore;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * SDS for Envoy proxies (istiod's SecretGen): the TLS credentials a gateway names by
 * {@code credentialName}, asked for as {@code kubernetes://<name>} (the proxy's namespace) or
 * {@code kubernetes://<namespace>/<name>}. A name ending in {@code -cacert} gets only the CA
 * part as a {@code validation_context}; any other a {@code tls_certificate} with the chain and
 * key inline.
 *
 * <p>Who gets what is decided by the stream's verified identities, never by what the node
 * claims: {@link #forCaller} binds the generator to the SPIFFE identities
 * ({@code spiffe://<trust-domain>/ns/<ns>/sa/<sa>}) XDS_AUTH authenticated the stream with
 * (see {@link Connection#identities()}), and every SDS response of a stream is generated
 * through it. A stream without a verified identity (the plaintext port 15010, or XDS_AUTH off)
 * gets no Secret at all, as istiod ("Ensure you are connecting over TLS port and are
 * authenticated"). An authenticated stream gets Secrets of a namespace one of its identities
 * names only (istiod then asks Kubernetes RBAC; there is none here, so anything else is
 * refused). Refusals, unparsable names and missing credentials are left out (not a stream
 * error), logged with the proxy id and counted in {@code pilot_sds_certificate_errors_total}:
 * one bad reference does not break the others. Nothing here goes through the shared XdsCache:
 * private keys are built per request and held nowhere else.
 */
final class SecretGenerator {
    private static final System.Logger LOG = System.getLogger(SecretGenerator.class.getName());
    static final String PREFIX = "kubernetes://";
    static final IstioCounter CERTIFICATE_ERRORS = IstioCounter.of("pilot_sds_certificate_errors_total",
            "Total number of failures to fetch SDS key and certificate.");

    private final Supplier<CredentialStore> store;

    SecretGenerator(Supplier<CredentialStore> store) {
        this.store = store;
    }

    /** A parsed resource name: the Secret's namespace and name (name may end in -cacert). */
    record Ref(String namespace, String name) {
        boolean caOnly() {
            return name.endsWith(CredentialStore.CA_SUFFIX);
        }

        /** The Secret itself and its -cacert twin (or the other way round): a change to either concerns this name. */
        boolean concerns(Set<ConfigKey> changed) {
            String other = caOnly() ? name.substring(0, name.length() - CredentialStore.CA_SUFFIX.length())
                    : name + CredentialStore.CA_SUFFIX;
            return changed.contains(CredentialStore.key(namespace, name))
                    || changed.contains(CredentialStore.key(namespace, other));
        }
    }

    /** {@code kubernetes://name} (in {@code proxyNamespace}) or {@code kubernetes://ns/name}; null otherwise. */
    static Ref parse(String resourceName, String proxyNamespace) {
        if (!resourceName.startsWith(PREFIX)) {
            return null;
        }
        String rest = resourceName.substring(PREFIX.length());
        int slash = rest.indexOf('/');
        String ns = slash < 0 ? proxyNamespace : rest.substring(0, slash);
        String name = slash < 0 ? rest : rest.substring(slash + 1);
        if (ns.isEmpty() || name.isEmpty() || name.indexOf('/') >= 0) {
            return null;
        }
        return new Ref(ns, name);
    }

    /** Whether a request with these changed configs must regenerate SDS (istiod's sdsNeedsPush). */
    static boolean needsPush(Set<ConfigKey> changed) {
        if (changed.isEmpty()) {
            return true;
        }
        for (ConfigKey k : changed) {
            if (k.kind().equals(CredentialStore.KIND)) {
                return true;
            }
        }
        return false;
    }

    /** Whether any of the SDS names a proxy watches concerns one of the changed Secrets. */
    static boolean watches(Proxy proxy, Set<String> names, Set<ConfigKey> changed) {
        for (String n : names) {
            Ref r = parse(n, proxy.namespace());
            if (r != null && r.concerns(changed)) {
                return true;
            }
        }
        return false;
    }

    /**
     * The SDS generator of one stream, bound to the identities XDS_AUTH verified on it (empty:
     * not authenticated, nothing is served). The only way SDS resources are generated.
     */
    Generator forCaller(List<String> identities) {
        List<String> verified = List.copyOf(identities);
        return (proxy, push, names, wildcard) -> generate(proxy, verified, names);
    }

    /**
     * The namespace of a SPIFFE identity {@code spiffe://<trust-domain>/ns/<ns>/sa/<sa>}, or
     * null when it is not of that form.
     */
    static String identityNamespace(String identity) {
        return SpiffeIdentities.namespace(identity);
    }

    List<Any> generate(Proxy proxy, List<String> identities, Set<String> names) {
        Set<String> allowed = new TreeSet<>();
        for (String id : identities) {
            String ns = identityNamespace(id);
            if (ns != null) {
                allowed.add(ns);
            }
        }
        if (allowed.isEmpty()) {
            if (names.stream().anyMatch(n -> !n.equals("*"))) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "proxy " + proxy.id() + " is not authorized to receive secrets: "
                        + (identities.isEmpty() ? "the stream has no verified identity" : "no identity of the form "
                        + "spiffe://<trust-domain>/ns/<namespace>/sa/<name> in " + identities)
                        + ". Ensure you are connecting over TLS port and are authenticated (XDS_AUTH)");
            }
            return List.of();
        }
        CredentialStore credentials = store.get();
        List<Any> out = new ArrayList<>();
        List<String> denied = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            if (n.equals("*")) {
                continue; // SDS has no wildcard: nothing to list
            }
            Ref r = parse(n, proxy.namespace());
            if (r == null) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "SDS resource name not understood proxy=" + proxy.id() + " resource=" + n
                        + " (expected " + PREFIX + "<name> or " + PREFIX + "<namespace>/<name>)");
                continue;
            }
            if (!allowed.contains(r.namespace())) {
                denied.add(n);
                continue;
            }
            Optional<Secret> secret = r.caOnly() ? credentials.caCertificate(r.namespace(), r.name())
                    .map(ca -> caSecret(n, ca))
                    : credentials.get(r.namespace(), r.name()).filter(Credential::hasKeyPair).map(c -> tlsSecret(n, c));
            if (secret.isEmpty()) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "SDS credential not found proxy=" + proxy.id() + " resource=" + n + ": "
                        + (r.caOnly() ? "no CA certificate in secret " : "no certificate and key in secret ")
                        + r.namespace() + "/" + r.name());
                continue;
            }
            out.add(Any.pack(secret.get()));
        }
        if (!denied.isEmpty()) {
            CERTIFICATE_ERRORS.increment();
            LOG.log(Level.WARNING, "proxy " + proxy.id() + " (verified namespaces " + allowed
                    + ") attempted to access unauthorized certificates "
                    + String.join(", ", denied.subList(0, Math.min(3, denied.size())))
                    + (denied.size() > 3 ? " and " + (denied.size() - 3) + " more" : "")
                    + ": a proxy gets secrets of its verified identity's namespace only");
        }
        return out;
    }

    static Secret tlsSecret(String resourceName, Credential c) {
        return Secret.newBuilder().setName(resourceName).setTlsCertificate(TlsCertificate.newBuilder()
                .setCertificateChain(inline(c.certificateChain()))
                .setPrivateKey(inline(c.privateKey()))).build();
    }

    static Secret caSecret(String resourceName, String caPem) {
        return Secret.newBuilder().setName(resourceName).setValidationContext(CertificateValidationContext.newBuilder()
                .setTrustedCa(inline(caPem))).build();
    }

    /** The PEM bytes exactly as the Secret held them (one char per byte, see SecretManifests). */
    private static DataSource inline(String pem) {
        return DataSource.newBuilder().setInlineBytes(ByteString.copyFrom(pem, StandardCharsets.ISO_8859_1)).build();
    }

    /** For config dumps: the resource with its private key replaced by "[redacted]" (as Envoy's admin does). */
    static Any redacted(Any a) {
        try {
            Secret s = a.unpack(Secret.class);
            if (!s.hasTlsCertificate() || !s.getTlsCertificate().hasPrivateKey()) {
                return a;
            }
            return Any.pack(s.toBuilder().setTlsCertificate(s.getTlsCertificate().toBuilder()
                    .setPrivateKey(DataSource.newBuilder().setInlineString("[redacted]"))).build());
        } catch (InvalidProtocolBufferException e) {
            return a;
        }
    }
}
