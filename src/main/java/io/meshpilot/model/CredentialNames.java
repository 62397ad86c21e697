package io.meshpilot.model;

/**
 * How a gateway's TLS credential is named in config and asked for over SDS (istiod's
 * pilot/pkg/model/credentials/resource.go): a bare {@code credentialName} is a Secret of the
 * gateway's namespace ({@code kubernetes://<name>}); the Gateway API conversion writes
 * {@code kubernetes-gateway://<ns>/<name>} for Secrets, {@code configmap://<ns>/<name>} for CA
 * bundles, {@code builtin://} for the workload's own certificate and {@code invalid://} for a
 * reference it could not resolve (never served).
 */
public final class CredentialNames {
    public static final String KUBERNETES = "kubernetes://";
    public static final String KUBERNETES_GATEWAY = "kubernetes-gateway://";
    public static final String CONFIG_MAP = "configmap://";
    public static final String BUILTIN = "builtin://";
    public static final String INVALID = "invalid://";
    /** Asks for only the CA part of a credential (istiod's SdsCaSuffix). */
    public static final String CA_SUFFIX = "-cacert";
    /** The workload certificate and root the local agent serves ({@code builtin://} names them). */
    public static final String WORKLOAD_CERTIFICATE = "default";
    public static final String WORKLOAD_ROOT = "ROOTCA";

    /** What kind of object a resource name refers to. */
    public enum Type { KUBERNETES, KUBERNETES_GATEWAY, CONFIG_MAP, INVALID }

    /**
     * A parsed SDS resource name.
     *
     * @param name the Secret's or ConfigMap's name (a Secret's may end in {@link #CA_SUFFIX}); empty for INVALID
     */
    public record Resource(Type type, String namespace, String name, String resourceName) {
        /** Whether only the CA part is asked for: a {@code -cacert} Secret name, or any ConfigMap. */
        public boolean caOnly() {
            return type == Type.CONFIG_MAP || name.endsWith(CA_SUFFIX);
        }
    }

    private CredentialNames() {
    }

    /**
     * istiod's ToResourceName: the SDS resource a {@code credentialName} is asked for as:
     * {@code builtin://...} is the workload's {@code default}, {@code invalid://...} is
     * {@code invalid://}, prefixed names stay, a bare name is {@code kubernetes://<name>}.
     */
    public static String toResourceName(String credentialName) {
        if (credentialName.startsWith(BUILTIN)) {
            return WORKLOAD_CERTIFICATE;
        }
        if (credentialName.startsWith(INVALID)) {
            return INVALID;
        }
        if (credentialName.startsWith(CONFIG_MAP) || credentialName.startsWith(KUBERNETES)
                || credentialName.startsWith(KUBERNETES_GATEWAY)) {
            return credentialName;
        }
        return KUBERNETES + credentialName;
    }

    /**
     * istiod's ParseResourceName: {@code kubernetes://name} (in {@code defaultNamespace}),
     * {@code kubernetes://ns/name}, {@code kubernetes-gateway://ns/name}, {@code configmap://ns/name}
     * or {@code invalid://...}; null for anything else or a part left empty.
     */
    public static Resource parse(String resourceName, String defaultNamespace) {
        if (resourceName.startsWith(INVALID)) {
            return new Resource(Type.INVALID, "", "", resourceName);
        }
        Type type;
        String rest;
        if (resourceName.startsWith(KUBERNETES)) {
            type = Type.KUBERNETES;
            rest = resourceName.substring(KUBERNETES.length());
        } else if (resourceName.startsWith(KUBERNETES_GATEWAY)) {
            type = Type.KUBERNETES_GATEWAY;
            rest = resourceName.substring(KUBERNETES_GATEWAY.length());
        } else if (resourceName.startsWith(CONFIG_MAP)) {
            type = Type.CONFIG_MAP;
            rest = resourceName.substring(CONFIG_MAP.length());
        } else {
            return null;
        }
        String[] parts = rest.split("/", -1);
        if (type != Type.KUBERNETES && parts.length < 2) {
            return null; // only kubernetes:// may leave the namespace out
        }
        String namespace = parts.length > 1 ? parts[0] : defaultNamespace;
        String name = parts.length > 1 ? parts[1] : parts[0];
        if (namespace == null || namespace.isEmpty() || name.isEmpty()) {
            return null;
        }
        return new Resource(type, namespace, name, resourceName);
    }
}
