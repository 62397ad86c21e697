package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A listener's {@code tls} into the Istio server's TLS settings (istiod's buildTLS,
 * buildSecretReference, buildCaCertificateReference, validateBackendClientCertificateRef).
 * Certificates are named as SDS resources the gateway proxy fetches
 * ({@code kubernetes-gateway://<namespace>/<name>}); a reference to another namespace is
 * checked against the ReferenceGrants before the Secret is looked up, so the status never tells
 * whether a Secret the Gateway may not read exists (istiod's CWE-203 note).
 */
public final class GatewayTlsConversion {
    /** Listener TLS option that picks another termination mode (istiod's GatewayTLSTerminateModeKey). */
    static final String TERMINATE_MODE = "gateway.istio.io/tls-terminate-mode";
    static final String CIPHER_SUITES_OPTION = "gateway.istio.io/tls-cipher-suites";
    static final String LISTENER_PROTOCOL_OPTION = "gateway.istio.io/listener-protocol";
    static final String GATEWAY_SECRET_PREFIX = "kubernetes-gateway://";
    static final String CONFIGMAP_PREFIX = "configmap://";
    static final String BUILTIN_CREDENTIAL = "builtin://";
    static final String CA_SUFFIX = "-cacert";
    static final String INVALID_CERTIFICATE_REF = "InvalidCertificateRef";
    static final String INVALID_CA_CERTIFICATE_REF = "InvalidCACertificateRef";
    static final String INVALID_CA_CERTIFICATE_KIND = "InvalidCACertificateKind";
    static final String REF_NOT_PERMITTED = "RefNotPermitted";
    /**
     * The cipher suites istiod passes on (pkg/config/security ValidCipherSuites: BoringSSL's without
     * PSK); others would make Envoy reject the listener.
     */
    private static final Set<String> VALID_CIPHER_SUITES = Set.of("ECDHE-ECDSA-AES128-GCM-SHA256",
            "ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-ECDSA-AES128-SHA",
            "ECDHE-RSA-AES128-SHA", "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES256-SHA", "AES128-GCM-SHA256",
            "AES256-GCM-SHA384", "AES128-SHA", "AES256-SHA", "DES-CBC3-SHA");
    private static final String SECRET = "/Secret";
    private static final String CONFIG_MAP = "/ConfigMap";

    /** The TLS settings (null when the listener has no {@code tls}) and the first error found. */
    public record Tls(ServerTLSSettings settings, ConfigError error) {
    }

    private final GatewayApiInputs inputs;
    private final ReferenceGrants grants;

    public GatewayTlsConversion(GatewayApiInputs inputs, ReferenceGrants grants) {
        this.inputs = inputs;
        this.grants = grants;
    }

    /**
     * @param owner           the Gateway or ListenerSet the listener belongs to (its namespace and kind
     *                        decide which references need a grant)
     * @param gatewaySpec     the Gateway's spec, for {@code tls.frontend} client validation
     * @param listener        the listener
     * @param autoPassthrough istiod's IsAutoPassthrough for this listener
     */
    public Tls build(GatewayApiObject owner, JsonObject gatewaySpec, JsonObject listener, boolean autoPassthrough) {
        Optional<JsonObject> maybeTls = JsonFields.optionalObject(listener, "tls");
        if (maybeTls.isEmpty()) {
            return new Tls(null, null);
        }
        JsonObject tls = maybeTls.get();
        Map<String, String> options = JsonFields.stringMap(tls, "options");
        ServerTLSSettings.Builder out = ServerTLSSettings.newBuilder();
        String mode = JsonFields.optionalString(tls, "mode").orElse("Terminate");
        if (mode.equals("Terminate")) {
            out.setMode(ServerTLSSettings.TLSmode.SIMPLE);
            switch (options.getOrDefault(TERMINATE_MODE, "")) {
                case "MUTUAL" -> out.setMode(ServerTLSSettings.TLSmode.MUTUAL);
                case "OPTIONAL_MUTUAL" -> out.setMode(ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL);
                case "ISTIO_SIMPLE" -> {
                    return new Tls(out.setCredentialName(BUILTIN_CREDENTIAL).build(), null);
                }
                case "ISTIO_MUTUAL" -> {
                    return new Tls(out.setMode(ServerTLSSettings.TLSmode.ISTIO_MUTUAL).build(), null);
                }
                default -> {
                }
            }
            Optional<ConfigError> error = terminate(owner, gatewaySpec, listener, tls, options, out);
            if (error.isPresent()) {
                return new Tls(out.build(), error.get());
            }
        } else if (mode.equals("Passthrough")) {
            out.setMode(autoPassthrough ? ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH
                    : ServerTLSSettings.TLSmode.PASSTHROUGH);
        }
        String ciphers = options.getOrDefault(CIPHER_SUITES_OPTION, "");
        if (!ciphers.isEmpty()) {
            out.addAllCipherSuites(filterCipherSuites(ciphers));
        }
        return new Tls(out.build(), null);
    }

    /**
     * istiod's IsAutoPassthrough: the listener option {@code gateway.istio.io/listener-protocol:
     * auto-passthrough}, or a Gateway labelled with a network whose port is the network gateway port.
     */
    public static boolean autoPassthrough(Map<String, String> gatewayLabels, JsonObject listener) {
        Optional<JsonObject> tls = JsonFields.optionalObject(listener, "tls");
        if (tls.isEmpty()) {
            return false;
        }
        if ("auto-passthrough".equals(JsonFields.stringMap(tls.get(), "options").get(LISTENER_PROTOCOL_OPTION))) {
            return true;
        }
        if (!gatewayLabels.containsKey("topology.istio.io/network")) {
            return false;
        }
        String expected = gatewayLabels.getOrDefault("networking.istio.io/gatewayPort", "15443");
        return String.valueOf(JsonFields.integer(listener, "port", 0)).equals(expected);
    }

    /**
     * The Gateway's {@code spec.tls.backend.clientCertificateRef} check (status only: istiod does not
     * configure it on listeners); null when unset or valid.
     */
    public ConfigError backendClientCertificateProblem(GatewayApiObject gateway) {
        JsonObject backend = JsonFields.object(JsonFields.object(gateway.spec(), "tls"), "backend");
        Optional<JsonObject> ref = JsonFields.optionalObject(backend, "clientCertificateRef");
        if (ref.isEmpty()) {
            return null;
        }
        String refText = refString(ref.get());
        if (!groupKind(ref.get(), SECRET).equals(SECRET)) {
            return new ConfigError("InvalidClientCertificateRef",
                    "invalid clientCertificateRef " + refText + ", only secret is allowed");
        }
        String namespace = JsonFields.optionalString(ref.get(), "namespace").orElse(gateway.namespace());
        String name = JsonFields.string(ref.get(), "name");
        Optional<Map<String, byte[]>> secret = inputs.secret(namespace, name);
        if (secret.isEmpty()) {
            return new ConfigError("InvalidClientCertificateRef", "invalid clientCertificateRef " + refText
                    + ", secret " + namespace + "/" + name + " not found");
        }
        Optional<String> problem = CertificateChecks.keyPairProblem(secret.get());
        if (problem.isPresent()) {
            return new ConfigError("InvalidClientCertificateRef", "invalid clientCertificateRef " + refText + ", "
                    + problem.get());
        }
        if (!namespace.equals(gateway.namespace())
                && !grants.allowed(gateway.kind(), gateway.namespace(), "", "Secret", namespace, name)) {
            return new ConfigError(REF_NOT_PERMITTED, "clientCertificateRef " + name + "/" + namespace
                    + " not accessible to a Gateway in namespace \"" + gateway.namespace()
                    + "\" (missing a ReferenceGrant?)");
        }
        return null;
    }

    private Optional<ConfigError> terminate(GatewayApiObject owner, JsonObject gatewaySpec, JsonObject listener,
                                            JsonObject tls, Map<String, String> options, ServerTLSSettings.Builder out) {
        List<JsonObject> refs = JsonFields.objects(tls, "certificateRefs");
        if (refs.size() > 2) {
            return Optional.of(new ConfigError(INVALID_CERTIFICATE_REF,
                    "TLS mode can only support up to 2 server certificates"));
        }
        List<String> credentials = new ArrayList<>();
        ConfigError combined = null;
        for (JsonObject ref : refs) {
            String namespace = JsonFields.optionalString(ref, "namespace").orElse(owner.namespace());
            String name = JsonFields.string(ref, "name");
            if (!namespace.equals(owner.namespace())
                    && !grants.allowed(owner.kind(), owner.namespace(), "", "Secret", namespace, name)) {
                combined = ConfigError.join(combined, new ConfigError(REF_NOT_PERMITTED, "certificateRef " + name + "/"
                        + namespace + " not accessible to a Gateway in namespace \"" + owner.namespace()
                        + "\" (missing a ReferenceGrant?)"));
                continue;
            }
            Optional<ConfigError> problem = secretProblem(ref, namespace, name);
            if (problem.isPresent()) {
                combined = ConfigError.join(combined, problem.get());
                continue;
            }
            credentials.add(GATEWAY_SECRET_PREFIX + namespace + "/" + name);
        }
        if (credentials.isEmpty()) {
            return Optional.ofNullable(combined);
        }
        if (credentials.size() == 1) {
            out.setCredentialName(credentials.get(0));
        } else {
            out.addAllCredentialNames(credentials);
        }
        return frontendValidation(owner, gatewaySpec, listener, options, out);
    }

    /** {@code spec.tls.frontend} client certificate validation for the listener's port (istiod's resolveGatewayTLS). */
    private Optional<ConfigError> frontendValidation(GatewayApiObject owner, JsonObject gatewaySpec, JsonObject listener,
                                                     Map<String, String> options, ServerTLSSettings.Builder out) {
        Optional<JsonObject> frontend = JsonFields.optionalObject(JsonFields.object(gatewaySpec, "tls"), "frontend");
        if (frontend.isEmpty()) {
            return Optional.empty();
        }
        int port = JsonFields.integer(listener, "port", 0);
        JsonObject portTls = JsonFields.objects(frontend.get(), "perPort").stream()
                .filter(p -> JsonFields.integer(p, "port", -1) == port).findFirst()
                .map(p -> JsonFields.object(p, "tls")).orElse(JsonFields.object(frontend.get(), "default"));
        JsonObject validation = JsonFields.object(portTls, "validation");
        List<JsonObject> caRefs = JsonFields.objects(validation, "caCertificateRefs");
        if (caRefs.isEmpty()) {
            return Optional.empty();
        }
        if (caRefs.size() > 1) {
            return Optional.of(new ConfigError(INVALID_CA_CERTIFICATE_REF, "only one caCertificateRef is supported"));
        }
        JsonObject ref = caRefs.get(0);
        String namespace = JsonFields.optionalString(ref, "namespace").orElse(owner.namespace());
        String name = JsonFields.string(ref, "name");
        boolean secret = groupKind(ref, "").equals(SECRET);
        String resourceName = (secret ? GATEWAY_SECRET_PREFIX : CONFIGMAP_PREFIX) + namespace + "/" + name + CA_SUFFIX;
        if (!namespace.equals(owner.namespace()) && !grants.allowed(owner.kind(), owner.namespace(), "",
                secret ? "Secret" : "ConfigMap", namespace, name + CA_SUFFIX)) {
            return Optional.of(new ConfigError(REF_NOT_PERMITTED, "caCertificateRef " + namespace + "/" + name
                    + " not accessible to a Gateway in namespace \"" + owner.namespace() + "\" (missing a ReferenceGrant?)"));
        }
        Optional<ConfigError> problem = caProblem(ref, namespace, name);
        if (problem.isPresent()) {
            return problem;
        }
        boolean insecure = "AllowInsecureFallback".equals(JsonFields.string(validation, "mode"));
        out.setMode(insecure ? ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL : ServerTLSSettings.TLSmode.MUTUAL);
        out.setCaCertCredentialName(resourceName);
        switch (options.getOrDefault(TERMINATE_MODE, "")) {
            case "MUTUAL" -> out.setMode(ServerTLSSettings.TLSmode.MUTUAL);
            case "OPTIONAL_MUTUAL" -> out.setMode(ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL);
            default -> {
            }
        }
        return Optional.empty();
    }

    private Optional<ConfigError> secretProblem(JsonObject ref, String namespace, String name) {
        String refText = refString(ref);
        if (!groupKind(ref, SECRET).equals(SECRET)) {
            return Optional.of(new ConfigError(INVALID_CERTIFICATE_REF,
                    "invalid certificate reference " + refText + ", only secret is allowed"));
        }
        Optional<Map<String, byte[]>> secret = inputs.secret(namespace, name);
        if (secret.isEmpty()) {
            return Optional.of(new ConfigError(INVALID_CERTIFICATE_REF, "invalid certificate reference " + refText
                    + ", secret " + namespace + "/" + name + " not found"));
        }
        return CertificateChecks.keyPairProblem(secret.get()).map(p -> new ConfigError(INVALID_CERTIFICATE_REF,
                "invalid certificate reference " + refText + ", " + p));
    }

    private Optional<ConfigError> caProblem(JsonObject ref, String namespace, String name) {
        String refText = refString(ref);
        String groupKind = groupKind(ref, "");
        Optional<Map<String, byte[]>> data;
        String kind;
        if (groupKind.equals(CONFIG_MAP)) {
            kind = "configmap";
            data = inputs.configMap(namespace, name).map(CertificateChecks::bytes);
        } else if (groupKind.equals(SECRET)) {
            kind = "secret";
            data = inputs.secret(namespace, name);
        } else {
            return Optional.of(new ConfigError(INVALID_CA_CERTIFICATE_KIND, "invalid CA certificate reference "
                    + refText + ", only secret and configmap are allowed"));
        }
        if (data.isEmpty()) {
            return Optional.of(new ConfigError(INVALID_CA_CERTIFICATE_REF, "invalid CA certificate reference "
                    + refText + ", " + kind + " " + namespace + "/" + name + " not found"));
        }
        return CertificateChecks.caBundleProblem(data.get()).map(p -> new ConfigError(INVALID_CA_CERTIFICATE_REF,
                "invalid CA certificate reference " + refText + ", " + p));
    }

    /**
     * {@code group/kind} as istiod's NormalizeReference: an unset group or kind is the default's
     * ({@code defaultGroupKind} is {@code group/kind}; every kind compared here is in the core group).
     */
    private static String groupKind(JsonObject ref, String defaultGroupKind) {
        int slash = defaultGroupKind.indexOf('/');
        String defaultKind = slash < 0 ? "" : defaultGroupKind.substring(slash + 1);
        return JsonFields.optionalString(ref, "group").orElse("") + "/"
                + JsonFields.optionalString(ref, "kind").orElse(defaultKind);
    }

    /** istiod's secretObjectReferenceString/objectReferenceString: {@code group/kind/name.namespace} as written. */
    private static String refString(JsonObject ref) {
        return JsonFields.string(ref, "group") + "/" + JsonFields.string(ref, "kind") + "/"
                + JsonFields.string(ref, "name") + "." + JsonFields.string(ref, "namespace");
    }

    /** istiod's FilterCipherSuites: known suites and operator expressions, first occurrence only. */
    private static List<String> filterCipherSuites(String option) {
        Set<String> kept = new LinkedHashSet<>();
        for (String raw : option.split(",")) {
            String s = raw.strip();
            if (s.isEmpty() || s.equals("ALL") || !Character.isLetterOrDigit(s.charAt(0))
                    || VALID_CIPHER_SUITES.contains(s)) {
                kept.add(s);
            }
        }
        return List.copyOf(kept);
    }
}
