package io.meshpilot.model;

import io.meshpilot.config.Config;
import java.util.List;

/**
 * What one proxy may see of the mesh (istiod's SidecarScope, for outbound traffic): its
 * namespace, and the Sidecar resource that applies to it, if any, with that Sidecar's egress
 * hosts ({@code namespace/host} patterns). Proxies of the same namespace under the same
 * Sidecar see the same thing, so generated resources are shared by {@link #key()}.
 *
 * @param namespace the proxy's namespace
 * @param sidecar   the Sidecar applying to it (workload-selected, namespace default, or the
 *                  root namespace's); null when none: everything exported to the namespace
 * @param egress    the Sidecar's egress hosts, all listeners together; empty without a Sidecar
 */
public record ProxyScope(String namespace, Config sidecar, List<EgressHost> egress) {

    public ProxyScope {
        egress = List.copyOf(egress);
    }

    /** No Sidecar: everything exported to {@code namespace}. */
    public static ProxyScope of(String namespace) {
        return new ProxyScope(namespace, null, List.of());
    }

    /** Equal for proxies that see the same services, routes and policies. */
    public String key() {
        return sidecar == null ? namespace : namespace + "|" + sidecar.key();
    }

    /** Whether the Sidecar's egress lets the proxy reach {@code service} (always true without one). */
    public boolean egressAllows(Service service) {
        if (sidecar == null) {
            return true;
        }
        for (EgressHost h : egress) {
            if (h.matches(service.namespace(), service.hostname(), namespace)) {
                return true;
            }
        }
        return false;
    }

    /**
     * One egress host of a Sidecar: {@code ns/host} where ns is a namespace, {@code .} (the
     * Sidecar's own), {@code *} (any) or {@code ~} (none), and host an exact name, {@code *}, or
     * {@code *.suffix}.
     */
    public record EgressHost(String namespace, String host) {
        public static EgressHost parse(String value) {
            int slash = value.indexOf('/');
            return slash < 0 ? new EgressHost("*", value)
                    : new EgressHost(value.substring(0, slash), value.substring(slash + 1));
        }

        boolean matches(String serviceNamespace, String hostname, String sidecarNamespace) {
            boolean ns = switch (namespace) {
                case "*" -> true;
                case "~" -> false;
                case "." -> serviceNamespace.equals(sidecarNamespace);
                default -> serviceNamespace.equals(namespace);
            };
            if (!ns) {
                return false;
            }
            if (host.equals("*")) {
                return true;
            }
            if (host.startsWith("*.")) {
                return hostname.endsWith(host.substring(1));
            }
            return hostname.equals(host);
        }
    }
}
