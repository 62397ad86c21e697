package io.meshpilot.kube;

import java.nio.file.Path;
import java.util.function.Function;

/**
 * How a pod reaches its API server (client-go's rest.InClusterConfig): HTTPS to
 * KUBERNETES_SERVICE_HOST:KUBERNETES_SERVICE_PORT, trusting the service account's ca.crt and
 * sending its token (re-read as the kubelet rotates it).
 *
 * @param serviceAccountDir where {@code token} and {@code ca.crt} are: the kubelet's mount,
 *                          unless $MESHPILOT_SERVICE_ACCOUNT_DIR names another directory (a
 *                          copied service account outside a pod, and tests)
 */
public record InClusterConfig(String host, int port, Path serviceAccountDir) {
    public static final Path SERVICE_ACCOUNT_DIR = Path.of("/var/run/secrets/kubernetes.io/serviceaccount");

    public InClusterConfig {
        if (host == null || host.isBlank()) {
            throw new IllegalArgumentException("KUBERNETES_SERVICE_HOST is not set");
        }
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("KUBERNETES_SERVICE_PORT " + port + ": expected a port number 1-65535");
        }
    }

    /** From KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT and MESHPILOT_SERVICE_ACCOUNT_DIR. */
    public static InClusterConfig fromEnv(Function<String, String> env) {
        String portText = env.apply("KUBERNETES_SERVICE_PORT");
        if (portText == null || portText.isBlank()) {
            throw new IllegalArgumentException("KUBERNETES_SERVICE_HOST is set but KUBERNETES_SERVICE_PORT is not");
        }
        int port;
        try {
            port = Integer.parseInt(portText.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("KUBERNETES_SERVICE_PORT \"" + portText + "\": expected a port number 1-65535");
        }
        String dir = env.apply("MESHPILOT_SERVICE_ACCOUNT_DIR");
        return new InClusterConfig(env.apply("KUBERNETES_SERVICE_HOST"), port,
                dir == null || dir.isBlank() ? SERVICE_ACCOUNT_DIR : Path.of(dir));
    }

    /** {@code https://host:port}, an IPv6 host in brackets. */
    public String url() {
        String h = host.trim();
        return "https://" + (h.contains(":") && !h.startsWith("[") ? "[" + h + "]" : h) + ":" + port;
    }

    public Path tokenFile() {
        return serviceAccountDir.resolve("token");
    }

    public Path caFile() {
        return serviceAccountDir.resolve("ca.crt");
    }
}
