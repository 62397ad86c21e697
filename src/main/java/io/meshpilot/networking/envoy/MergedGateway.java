package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The servers of every Gateway that selects one router proxy, grouped by port and bind
 * address (istiod's MergeGateways; a bound server's route names end in {@code .<bind>}). A port carries either plaintext HTTP servers, which share the route
 * configuration {@code http.<port>}, or TLS/TCP servers, which get one filter chain each
 * (HTTPS servers that terminate TLS have their own route configuration
 * {@code https.<port>.<portName>.<gateway>.<namespace>}). A server that does not fit the
 * port's kind, a second plain TCP server on a port, or a TLS server for a host another one on
 * the port already serves, is dropped and listed in {@link #rejected()}; the rest still apply.
 * Port numbers are the listener ports: a server port that a service of the gateway's own
 * workload maps to a target port (80 to 8080 for the stock ingress gateway) listens on the
 * target port, as istiod's resolvePorts; route names carry it too ({@code http.8080}).
 *
 * @param ports    the listener ports in the order their first server appeared (oldest Gateway first)
 * @param rejected why a server was left out, one line each
 */
public record MergedGateway(List<ServerPort> ports, List<String> rejected) {

    public MergedGateway {
        ports = List.copyOf(ports);
        rejected = List.copyOf(rejected);
    }

    /** One gateway server in context: its Gateway ({@code namespace/name}) and what it was given. */
    public record GatewayServer(String gateway, String gatewayNamespace, Server server, String routeName,
                                List<String> hosts) {
        public GatewayServer {
            hosts = List.copyOf(hosts);
        }

        public Protocol protocol() {
            return Protocol.parse(server.getPort().getProtocol());
        }

        /** HTTPS that ends TLS here and speaks HTTP inside (not passthrough). */
        public boolean terminatesHttps() {
            return protocol() == Protocol.HTTPS && server.hasTls() && !passthrough(server.getTls());
        }

        /** TLS or HTTPS that is passed through by SNI, or AUTO_PASSTHROUGH. */
        public boolean passthrough() {
            return server.hasTls() && passthrough(server.getTls())
                    && (protocol() == Protocol.HTTPS || protocol() == Protocol.TLS);
        }

        public boolean autoPassthrough() {
            return server.hasTls() && server.getTls().getMode() == ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH;
        }

        /** The SNI names for a TLS filter chain: the hosts without namespace; none (any) for {@code *}. */
        public List<String> sniHosts() {
            LinkedHashSet<String> out = new LinkedHashSet<>();
            for (String h : hosts) {
                String name = hostName(h);
                if (name.equals("*")) {
                    return List.of();
                }
                out.add(name);
            }
            return List.copyOf(out);
        }

        private static boolean passthrough(ServerTLSSettings tls) {
            return tls.getMode() == ServerTLSSettings.TLSmode.PASSTHROUGH
                    || tls.getMode() == ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH;
        }
    }

    /**
     * The servers on one port and bind address ({@code bind} "" for the wildcard); {@code http}
     * when they are plaintext HTTP servers sharing {@code http.<port>[.<bind>]}.
     */
    public record ServerPort(int number, String bind, boolean http, List<GatewayServer> servers) {
        public ServerPort {
            servers = List.copyOf(servers);
        }

        public String httpRouteName() {
            return MergedGateway.httpRouteName(number, bind);
        }
    }

    /** Where servers merge: istiod's ServerPort is the listener port and the server's bind address. */
    private record PortKey(int number, String bind) {
        String describe() {
            return bind.isEmpty() ? String.valueOf(number) : number + " on " + bind;
        }
    }

    /** A server host without its namespace part ({@code ns/host} is {@code host}). */
    static String hostName(String serverHost) {
        int slash = serverHost.indexOf('/');
        return slash < 0 ? serverHost : serverHost.substring(slash + 1);
    }

    /** istiod's gatewayRDSRouteName for plaintext HTTP: {@code http.<port>}, {@code .<bind>} when bound. */
    public static String httpRouteName(int port, String bind) {
        return "http." + port + bindSuffix(bind);
    }

    /** istiod's route name for an HTTPS server that terminates TLS ({@code .<bind>} when bound). */
    public static String httpsRouteName(int port, String portName, String gatewayName, String namespace, String bind) {
        return "https." + port + "." + portName + "." + gatewayName + "." + namespace + bindSuffix(bind);
    }

    private static String bindSuffix(String bind) {
        return bind.isEmpty() ? "" : "." + bind;
    }

    public boolean isEmpty() {
        return ports.isEmpty();
    }

    /** Whether some server passes TLS through to the SNI-named cluster (the gateway then needs SNI-DNAT clusters). */
    public boolean autoPassthrough() {
        return ports.stream().flatMap(p -> p.servers().stream()).anyMatch(GatewayServer::autoPassthrough);
    }

    /** Every server whose HTTP routes are named {@code routeName}. */
    public List<GatewayServer> serversForRoute(String routeName) {
        List<GatewayServer> out = new ArrayList<>();
        for (ServerPort p : ports) {
            for (GatewayServer s : p.servers()) {
                if (routeName.equals(s.routeName())) {
                    out.add(s);
                }
            }
        }
        return out;
    }

    /** Whether {@code gateway}'s selector picks {@code proxy}: every selector label on the proxy (empty: all). */
    static boolean selects(Gateway gateway, Proxy proxy) {
        return LabelSelector.subsetOf(gateway.getSelectorMap(), proxy.labels());
    }

    /** Merges the Gateways that select {@code proxy}, oldest first. */
    public static MergedGateway of(Proxy proxy, PushContext push) {
        Map<PortKey, List<GatewayServer>> byPort = new LinkedHashMap<>();
        Map<PortKey, Boolean> httpPort = new LinkedHashMap<>();
        Map<PortKey, Set<String>> tlsHosts = new HashMap<>();
        List<String> rejected = new ArrayList<>();
        // istiod's resolvePorts: a server port the gateway's own service maps to a target port listens there
        Map<Integer, Integer> targetPorts = new HashMap<>();
        for (InboundPorts.InboundPort p : InboundPorts.of(proxy, push)) {
            targetPorts.putIfAbsent(p.servicePort().port(), p.targetPort());
        }
        for (Config c : push.gateways()) {
            Gateway gw = (Gateway) c.spec();
            if (!selects(gw, proxy)) {
                continue;
            }
            String key = c.namespace() + "/" + c.name();
            for (Server server : gw.getServersList()) {
                int number = targetPorts.getOrDefault(server.getPort().getNumber(), server.getPort().getNumber());
                PortKey at = new PortKey(number, server.getBind());
                Protocol protocol = Protocol.parse(server.getPort().getProtocol());
                boolean plainHttp = protocol.isHttp();
                List<String> hosts = hosts(server, c.namespace());
                String routeName = plainHttp ? httpRouteName(number, server.getBind()) : null;
                GatewayServer gs = new GatewayServer(key, c.namespace(), server, routeName, hosts);
                if (gs.terminatesHttps()) {
                    gs = new GatewayServer(key, c.namespace(), server,
                            httpsRouteName(server.getPort().getNumber(), server.getPort().getName(), c.name(), c.namespace(),
                                    server.getBind()),
                            hosts);
                }
                Boolean existing = httpPort.get(at);
                if (existing != null && existing != plainHttp) {
                    rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe() + " already carries "
                            + (existing ? "plaintext HTTP" : "TLS/TCP") + " servers");
                    continue;
                }
                if (existing != null && !plainHttp && !server.hasTls()) {
                    rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe()
                            + " already has a server and a plain TCP server cannot share it");
                    continue;
                }
                if (existing != null && !plainHttp && byPort.get(at).stream()
                        .anyMatch(o -> !o.server().hasTls())) {
                    rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe()
                            + " already has a plain TCP server");
                    continue;
                }
                if (!plainHttp) {
                    // istiod's CheckDuplicates: two TLS servers for one host on a port would give Envoy
                    // two filter chains with the same match, and it would refuse the whole listener
                    List<String> sni = gs.sniHosts().isEmpty() ? List.of("*") : gs.sniHosts();
                    Set<String> taken = tlsHosts.computeIfAbsent(at, n -> new HashSet<>());
                    List<String> dup = sni.stream().filter(taken::contains).toList();
                    if (!dup.isEmpty()) {
                        rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe()
                                + " already serves " + dup);
                        continue;
                    }
                    taken.addAll(sni);
                }
                httpPort.put(at, plainHttp);
                byPort.computeIfAbsent(at, n -> new ArrayList<>()).add(gs);
            }
        }
        List<ServerPort> ports = new ArrayList<>();
        byPort.forEach((at, servers) -> ports.add(new ServerPort(at.number(), at.bind(), httpPort.get(at), servers)));
        return new MergedGateway(ports, rejected);
    }

    /**
     * Server hosts as istiod keeps them after merging: {@code ./host} becomes
     * {@code <gateway namespace>/host}, {@code * /host} and bare hosts become {@code host}.
     */
    private static List<String> hosts(Server server, String gatewayNamespace) {
        List<String> out = new ArrayList<>();
        for (String h : server.getHostsList()) {
            int slash = h.indexOf('/');
            if (slash < 0) {
                out.add(h);
            } else {
                String ns = h.substring(0, slash);
                String name = h.substring(slash + 1);
                out.add(switch (ns) {
                    case "*" -> name;
                    case "." -> gatewayNamespace + "/" + name;
                    default -> h;
                });
            }
        }
        return out;
    }

    private static String describe(Server s) {
        return (s.getName().isEmpty() ? "" : s.getName() + " ") + s.getPort().getNumber() + "/"
                + s.getPort().getProtocol();
    }
}
