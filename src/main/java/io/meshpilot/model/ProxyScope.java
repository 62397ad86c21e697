package io.meshpilot.model;

import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import java.util.List;
import java.util.Optional;

/**
 * What one proxy may see of the mesh (istiod's SidecarScope, for outbound traffic): its
 * namespace, and the Sidecar resource that applies to it, if any, with that Sidecar's egress
 * listeners. Proxies of the same namespace under the same Sidecar see the same thing, so
 * generated resources are shared by {@link #key()}.
 *
 * @param namespace the proxy's namespace
 * @param sidecar   the Sidecar applying to it (workload-selected, namespace default, or the
 *                  root namespace's); null when none: everything exported to the namespace
 * @param egress    the Sidecar's egress listeners in its order (a Sidecar without egress gets
 *                  istiod's default, which imports every host); without a Sidecar that default too
 */
public record ProxyScope(String namespace, Config sidecar, List<EgressListener> egress) {

    public ProxyScope {
        egress = List.copyOf(egress);
    }

    /** No Sidecar: everything exported to {@code namespace}. */
    public static ProxyScope of(String namespace) {
        return new ProxyScope(namespace, null, List.of(EgressListener.IMPORT_ALL));
    }

    /** Equal for proxies that see the same services, routes and policies. */
    public String key() {
        return sidecar == null ? namespace : namespace + "|" + sidecar.key();
    }

    /** Whether some egress listener lets the proxy reach {@code service} (istiod's union of their imports). */
    public boolean egressAllows(Service service) {
        return egress.stream().anyMatch(l -> l.imports(service, namespace));
    }

    /**
     * istiod's SidecarScope.GetEgressListenerForRDS: the listener of the route's port (for a
     * unix socket, port 0, the one bound to {@code routeName}), else the catch-all; empty when
     * the Sidecar has neither.
     */
    public Optional<EgressListener> listenerForRoute(int port, String routeName) {
        for (EgressListener l : egress) {
            if (l.port() == null) {
                return Optional.of(l);
            }
            if (l.port().port() == port && (port != 0 || l.bind().equals(routeName))) {
                return Optional.of(l);
            }
        }
        return Optional.empty();
    }

    /**
     * One egress listener of a Sidecar (istiod's IstioEgressListenerWrapper): the hosts it
     * imports and, when set, the port its services are seen on, the address it binds to and
     * whether it binds a real socket instead of taking iptables-redirected traffic.
     *
     * @param port        the listener's port (name, number, protocol); null for the catch-all
     * @param bind        the address to bind ({@code unix://PATH} for a socket), empty for none
     * @param captureNone captureMode NONE: the listener binds its port itself
     * @param hosts       the imported {@code namespace/host} patterns
     */
    public record EgressListener(Port port, String bind, boolean captureNone, List<EgressHost> hosts) {
        /** istiod's default egress listener: every host of every namespace. */
        public static final EgressListener IMPORT_ALL = new EgressListener(null, "", false,
                List.of(new EgressHost("*", "*")));
        public static final String UNIX_PREFIX = "unix://";

        public EgressListener {
            hosts = List.copyOf(hosts);
        }

        /**
         * istiod's needsPortMatch: a listener with a port sees its services on that port only,
         * except a unix socket (port 0) and an HTTP_PROXY port (a generic egress HTTP proxy).
         */
        public boolean matchesPort() {
            return port != null && port.port() != 0 && port.protocol() != Protocol.HTTP_PROXY;
        }

        /**
         * istiod's bindToPort: a real socket for captureMode NONE and unix sockets (an
         * original-destination hand-over makes no sense for either); otherwise the listener
         * takes what iptables redirects to virtualOutbound.
         */
        public boolean bindsToPort() {
            return captureNone || bind.startsWith(UNIX_PREFIX);
        }

        /** Whether the hosts import {@code service} and, for a port listener, the service has the port. */
        public boolean imports(Service service, String sidecarNamespace) {
            if (matchesPort() && service.port(port.port()).isEmpty()) {
                return false;
            }
            return hosts.stream().anyMatch(h -> h.matches(service.namespace(), service.hostname(), sidecarNamespace));
        }
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
