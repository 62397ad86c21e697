package io.meshpilot.registry.multicluster;

import io.kubernetes.client.util.KubeConfig;
import java.io.StringReader;
import java.util.List;
import java.util.Map;

/**
 * A remote cluster's kubeconfig as a remote Secret holds it (istiod's BuildClientsFromConfig):
 * loaded, checked to name a server, and refused when its users would make MeshPilot read local
 * files or run programs (istiod's sanitizeKubeConfig: a Secret's author must not get the
 * server's files or commands through it). Only the {@code oidc} auth provider is allowed.
 */
public final class RemoteKubeconfig {
    /** User fields that read local files or run commands, with istiod's names for them. */
    private static final Map<String, String> UNSAFE_USER_FIELDS = Map.of(
            "client-certificate", "clientCertificate",
            "client-key", "clientKey",
            "tokenFile", "tokenFile",
            "exec", "exec");

    private RemoteKubeconfig() {
    }

    /**
     * @throws IllegalArgumentException saying why the text is no usable kubeconfig
     */
    public static KubeConfig parse(String text) {
        if (text == null || text.isBlank()) {
            throw new IllegalArgumentException("kubeconfig is empty");
        }
        KubeConfig config;
        try {
            config = KubeConfig.loadKubeConfig(new StringReader(text));
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("kubeconfig cannot be loaded: " + firstLine(e.getMessage()), e);
        }
        if (config == null) {
            throw new IllegalArgumentException("kubeconfig cannot be loaded: not a YAML mapping");
        }
        String server;
        try {
            server = config.getServer();
        } catch (RuntimeException e) {
            throw new IllegalArgumentException("kubeconfig is not valid: " + firstLine(e.getMessage()), e);
        }
        if (server == null || server.isBlank()) {
            throw new IllegalArgumentException("kubeconfig is not valid: its current-context \""
                    + config.getCurrentContext() + "\" names no cluster server");
        }
        checkUsers(config.getUsers());
        return config;
    }

    private static void checkUsers(List<Object> users) {
        if (users == null) {
            return;
        }
        for (Object u : users) {
            if (!(u instanceof Map<?, ?> named) || !(named.get("user") instanceof Map<?, ?> user)) {
                continue;
            }
            for (var f : UNSAFE_USER_FIELDS.entrySet()) {
                Object v = user.get(f.getKey());
                if (v != null && !v.toString().isEmpty()) {
                    throw new IllegalArgumentException("kubeconfig is not allowed: " + f.getValue() + " is not allowed"
                            + " (user " + named.get("name") + ")");
                }
            }
            if (user.get("auth-provider") instanceof Map<?, ?> provider && !"oidc".equals(provider.get("name"))) {
                throw new IllegalArgumentException("kubeconfig is not allowed: auth provider " + provider.get("name")
                        + " is not allowed (user " + named.get("name") + ")");
            }
        }
    }

    private static String firstLine(String message) {
        if (message == null) {
            return "unreadable";
        }
        int nl = message.indexOf('\n');
        return nl < 0 ? message : message.substring(0, nl);
    }
}
