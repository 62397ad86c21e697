package io.meshpilot.xds;

import com.google.protobuf.Any;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.Secret;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.CredentialNames;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.envoy.CertificateReferences;
import io.meshpilot.networking.envoy.MergedGateway;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.security.SpiffeIdentities;
import io.meshpilot.security.credentials.ClusterCredentials;
import io.meshpilot.security.credentials.Credential;
import io.meshpilot.security.credentials.CredentialStore;
import io.meshpilot.security.credentials.CredentialsController;
import io.meshpilot.security.credentials.KubeConfigMapCaCertificates;
import io.meshpilot.security.credentials.SecretReadAuthorizer;
import io.meshpilot.util.PrintableText;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * SDS for Envoy proxies (istiod's SecretGen): the TLS credentials a gateway names by
 * {@code credentialName}, asked for as istiod's resource names ({@link CredentialNames}):
 * {@code kubernetes://<name>} (the namespace of the proxy's verified identity),
 * {@code kubernetes://<namespace>/<name>} (both read from the proxy's cluster, then the config
 * cluster); the Gateway API's {@code kubernetes-gateway://<namespace>/<name>} (a Secret) and
 * {@code configmap://<namespace>/<name>} (a CA bundle), both read from the config cluster;
 * {@code invalid://} gets nothing. A Secret name ending in {@code -cacert} and every ConfigMap
 * get only the CA part as a {@code validation_context}; any other a {@code tls_certificate}
 * with the chain and key inline.
 *
 * <p>Who gets what is decided by the stream's verified identity, never by what the node
 * claims: {@link #forCaller} binds the generator to the SPIFFE identity
 * ({@code spiffe://<trust-domain>/ns/<ns>/sa/<sa>}) XDS_AUTH authenticated the stream with
 * (see {@link Connection#identities()}), and every SDS response of a stream is generated
 * through it. A stream without one (the plaintext port 15010, or XDS_AUTH off) gets no Secret
 * at all, as istiod ("Ensure you are connecting over TLS port and are authenticated"). Then
 * istiod's rules (filterAuthorizedResources): a {@code kubernetes://} Secret must be in the
 * identity's namespace, and, unless only its CA is asked for, the identity's service account
 * must be allowed to read that namespace's Secrets (in a cluster a SubjectAccessReview, see
 * {@link SecretReadAuthorizer}). A {@code kubernetes-gateway://} Secret is served, with no RBAC
 * question, only when it is a verified certificate reference of the proxy's own Gateways
 * ({@link CertificateReferences}: the Gateway's namespace and service account are the identity's,
 * and the Secret is in that namespace or a ReferenceGrant allows it). A {@code configmap://} CA
 * is public: anyone may have it. Refusals, unparsable names and missing credentials are left
 * out (not a stream error), logged with the proxy id and counted in
 * {@code pilot_sds_certificate_errors_total}: one bad reference does not break the others.
 * Nothing here goes through the shared XdsCache: private keys are built per request and held
 * nowhere else.
 */
final class SecretGenerator {
    private static final System.Logger LOG = System.getLogger(SecretGenerator.class.getName());
    static final IstioCounter CERTIFICATE_ERRORS = IstioCounter.of("pilot_sds_certificate_errors_total",
            "Total number of failures to fetch SDS key and certificate.");

    private final Supplier<CredentialsController> credentials;

    SecretGenerator(Supplier<CredentialsController> credentials) {
        this.credentials = credentials;
    }

    /** istiod's ParseResourceName (see {@link CredentialNames#parse}); null when not understood. */
    static CredentialNames.Resource parse(String resourceName, String identityNamespace) {
        return CredentialNames.parse(resourceName, identityNamespace);
    }

    /** istiod's GetConfigMapCaCert: {@code configmap://ns/name-cacert} is the ConfigMap {@code name}. */
    private static String withoutCaSuffix(String name) {
        return name.endsWith(CredentialNames.CA_SUFFIX) ? name.substring(0, name.length() - CredentialNames.CA_SUFFIX.length())
                : name;
    }

    /**
     * A Secret and its -cacert twin (or the other way round): a change to either concerns the
     * name; a {@code configmap://} name is concerned by its ConfigMap.
     */
    static boolean concerns(CredentialNames.Resource r, Set<ConfigKey> changed) {
        if (r.type() == CredentialNames.Type.CONFIG_MAP) {
            return changed.contains(new ConfigKey(KubeConfigMapCaCertificates.KIND, r.namespace(), withoutCaSuffix(r.name())));
        }
        if (r.type() != CredentialNames.Type.KUBERNETES && r.type() != CredentialNames.Type.KUBERNETES_GATEWAY) {
            return false;
        }
        String name = r.name();
        String other = name.endsWith(CredentialStore.CA_SUFFIX)
                ? name.substring(0, name.length() - CredentialStore.CA_SUFFIX.length()) : name + CredentialStore.CA_SUFFIX;
        return changed.contains(CredentialStore.key(r.namespace(), name))
                || changed.contains(CredentialStore.key(r.namespace(), other));
    }

    /** Whether a request with these changed configs must regenerate SDS (istiod's sdsNeedsPush). */
    static boolean needsPush(Set<ConfigKey> changed) {
        if (changed.isEmpty()) {
            return true;
        }
        for (ConfigKey k : changed) {
            if (k.kind().equals(CredentialStore.KIND) || k.kind().equals(KubeConfigMapCaCertificates.KIND)) {
                return true;
            }
        }
        return false;
    }

    /** Whether any of the SDS names a proxy watches concerns one of the changed Secrets. */
    static boolean watches(Proxy proxy, Set<String> names, Set<ConfigKey> changed) {
        for (String n : names) {
            CredentialNames.Resource r = parse(n, proxy.namespace());
            if (r != null && concerns(r, changed)) {
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
        return (proxy, push, names, wildcard) -> generate(proxy, push, verified, names);
    }

    /**
     * The namespace of a SPIFFE identity {@code spiffe://<trust-domain>/ns/<ns>/sa/<sa>}, or
     * null when it is not of that form.
     */
    static String identityNamespace(String identity) {
        return SpiffeIdentities.namespace(identity);
    }

    /**
     * istiod's VerifiedIdentity: the identity of the proxy's own namespace XDS_AUTH matched
     * (the first SPIFFE one when none is of it), or null.
     */
    static String verifiedIdentity(Proxy proxy, List<String> identities) {
        String first = null;
        for (String id : identities) {
            String ns = identityNamespace(id);
            if (ns != null && ns.equals(proxy.namespace())) {
                return id;
            }
            if (ns != null && first == null) {
                first = id;
            }
        }
        return first;
    }

    List<Any> generate(Proxy proxy, PushContext push, List<String> identities, Set<String> names) {
        String identity = verifiedIdentity(proxy, identities);
        if (identity == null) {
            if (names.stream().anyMatch(n -> !n.equals("*"))) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "proxy " + proxy.id() + " is not authorized to receive secrets: "
                        + (identities.isEmpty() ? "the stream has no verified identity" : "no identity of the form "
                        + "spiffe://<trust-domain>/ns/<namespace>/sa/<name> in " + identities)
                        + ". Ensure you are connecting over TLS port and are authenticated (XDS_AUTH)");
            }
            return List.of();
        }
        String namespace = identityNamespace(identity);
        CredentialsController controller = credentials.get();
        Optional<ClusterCredentials> own = controller.forCluster(proxy.clusterId());
        if (own.isEmpty()) {
            CERTIFICATE_ERRORS.increment();
            LOG.log(Level.WARNING, "proxy " + proxy.id() + " is from an unknown cluster " + proxy.clusterId()
                    + ", cannot retrieve certificates");
            return List.of();
        }
        String serviceAccount = SpiffeIdentities.serviceAccount(identity);
        Authorization authorization = new Authorization(own.get().authorizer(), serviceAccount, namespace,
                () -> verifiedReferences(proxy, push, namespace, serviceAccount));
        List<Any> out = new ArrayList<>();
        List<String> denied = new ArrayList<>();
        for (String n : Generators.ordered(names)) {
            if (n.equals("*")) {
                continue; // SDS has no wildcard: nothing to list
            }
            CredentialNames.Resource r = parse(n, namespace);
            if (r == null) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "SDS resource name not understood proxy=" + proxy.id() + " resource="
                        + PrintableText.clip(n, 256) + " (expected " + CredentialNames.KUBERNETES + "<name>, "
                        + CredentialNames.KUBERNETES + "<namespace>/<name>, " + CredentialNames.KUBERNETES_GATEWAY
                        + "<namespace>/<name> or " + CredentialNames.CONFIG_MAP + "<namespace>/<name>)");
                continue;
            }
            if (r.type() == CredentialNames.Type.INVALID) {
                continue; // istiod: a reference the conversion could not resolve; its status says why
            }
            if (!authorization.allows(r)) {
                denied.add(n);
                continue;
            }
            if (r.type() == CredentialNames.Type.CONFIG_MAP) {
                String configMap = withoutCaSuffix(r.name());
                Optional<String> ca = controller.configMapCaCertificate(r.namespace(), configMap);
                if (ca.isEmpty()) {
                    CERTIFICATE_ERRORS.increment();
                    LOG.log(Level.WARNING, "failed to fetch ca certificate for " + PrintableText.clip(n, 256) + " proxy="
                            + proxy.id() + ": " + controller.configMapCaProblem(r.namespace(), configMap));
                    continue;
                }
                out.add(Any.pack(caSecret(n, ca.get())));
                continue;
            }
            // istiod reads the Gateway API's names from the config cluster, kubernetes:// from the proxy's
            CredentialStore secrets = r.type() == CredentialNames.Type.KUBERNETES ? own.get().secrets()
                    : controller.store();
            Optional<Secret> secret = r.caOnly() ? secrets.caCertificate(r.namespace(), r.name()).map(ca -> caSecret(n, ca))
                    : secrets.get(r.namespace(), r.name()).filter(Credential::hasKeyPair).map(c -> tlsSecret(n, c));
            if (secret.isEmpty()) {
                CERTIFICATE_ERRORS.increment();
                LOG.log(Level.WARNING, "SDS credential not found proxy=" + proxy.id() + " resource="
                        + PrintableText.clip(n, 256) + ": " + (r.caOnly() ? "no CA certificate in secret "
                        : "no valid certificate and key in secret ") + r.namespace() + "/" + r.name());
                continue;
            }
            out.add(Any.pack(secret.get()));
        }
        if (!denied.isEmpty()) {
            CERTIFICATE_ERRORS.increment();
            LOG.log(Level.WARNING, "proxy " + proxy.id() + " (verified identity " + identity
                    + ") attempted to access unauthorized certificates "
                    + String.join(", ", denied.subList(0, Math.min(3, denied.size())))
                    + (denied.size() > 3 ? " and " + (denied.size() - 3) + " more" : "") + ": "
                    + authorization.reason());
        }
        return out;
    }

    /**
     * The {@code kubernetes-gateway://} names this proxy's Gateways verified for its identity;
     * none for a sidecar (istiod merges Gateways for routers only) or without a push.
     */
    private static Set<String> verifiedReferences(Proxy proxy, PushContext push, String namespace, String serviceAccount) {
        if (push == null || proxy.type() == Proxy.Type.SIDECAR) {
            return Set.of();
        }
        return CertificateReferences.verified(MergedGateway.of(proxy, push), namespace, serviceAccount,
                push.gatewayApi().referenceGrants());
    }

    /**
     * istiod's filterAuthorizedResources for one request: the namespace check per resource,
     * the RBAC question asked at most once (and only when a resource needs it), the proxy's
     * verified Gateway references computed at most once.
     */
    private static final class Authorization {
        private final SecretReadAuthorizer authorizer;
        private final String serviceAccount;
        private final String namespace;
        private final Supplier<Set<String>> verifiedReferences;
        private Set<String> verified;
        private Optional<String> refusal;
        private boolean crossNamespace;
        private boolean unverifiedGatewayReference;

        Authorization(SecretReadAuthorizer authorizer, String serviceAccount, String namespace,
                      Supplier<Set<String>> verifiedReferences) {
            this.authorizer = authorizer;
            this.serviceAccount = serviceAccount;
            this.namespace = namespace;
            this.verifiedReferences = verifiedReferences;
        }

        boolean allows(CredentialNames.Resource r) {
            switch (r.type()) {
                case KUBERNETES_GATEWAY -> {
                    if (verified == null) {
                        verified = verifiedReferences.get();
                    }
                    unverifiedGatewayReference |= !verified.contains(r.resourceName());
                    return verified.contains(r.resourceName());
                }
                case CONFIG_MAP -> {
                    return true; // only ca.crt is served, and clients read their servers' CAs across namespaces
                }
                default -> {
                    if (!r.namespace().equals(namespace)) {
                        crossNamespace = true;
                        return false;
                    }
                    if (r.caOnly()) {
                        return true; // a CA is public information
                    }
                    if (refusal == null) {
                        refusal = authorizer.refusal(serviceAccount, namespace);
                    }
                    return refusal.isEmpty();
                }
            }
        }

        String reason() {
            List<String> why = new ArrayList<>();
            if (refusal != null && refusal.isPresent()) {
                why.add(refusal.get());
            }
            if (crossNamespace) {
                why.add("a proxy gets secrets of its verified identity's namespace (" + namespace + ") only");
            }
            if (unverifiedGatewayReference) {
                why.add("not a verified certificate reference of this proxy's Gateways (the Gateway's namespace and "
                        + "service account must be the proxy's; a cross namespace secret reference requires ReferenceGrant)");
            }
            return String.join("; ", why);
        }
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
