package io.meshpilot.networking.envoy;

import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.config.Config;
import io.meshpilot.config.GeneratedConfigAnnotations;
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
import java.util.TreeSet;
import java.util.stream.Collectors;

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
 * <p>A Gateway generated from the Kubernetes Gateway API has no selector: it names its services
 * ({@code internal.istio.io/gateway-service}) and applies to a proxy that is an endpoint of one of
 * them in the Gateway's namespace. Its server ports are ports of those services and listen on
 * every target port they map to on the proxy, with no fallback (no such port: the server is
 * left out). With PILOT_ENABLE_STRICT_GATEWAY_MERGING (the default) a proxy serving a managed
 * Gateway API Gateway (one with a service account) gets no classic Gateway of another namespace.
 *
 * @param ports    the listener ports in the order their first server appeared (oldest Gateway first)
 * @param rejected why a server was left out, one line each
 * @param gateways the Gateways that apply to the proxy, oldest first (the certificate references SDS may
 *                 serve it are theirs)
 */
public record MergedGateway(List<ServerPort> ports, List<String> rejected, List<Config> gateways) {

    public MergedGateway {
        ports = List.copyOf(ports);
        rejected = List.copyOf(rejected);
        gateways = List.copyOf(gateways);
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

    /**
     * A Gateway that applies to the proxy. A Gateway generated from the Gateway API is selected by
     * service ({@link GeneratedConfigAnnotations#GATEWAY_SERVICE}) and carries the proxy's targets of
     * those services; a classic one is selected by labels ({@code legacySelector}).
     */
    private record Selected(Config config, boolean legacySelector, List<InboundPorts.InboundPort> targets) {
        boolean managedGatewayApi() {
            return gatewayApi() && !config.annotations().getOrDefault(GeneratedConfigAnnotations.SERVICE_ACCOUNT_NAME, "")
                    .isEmpty();
        }

        boolean gatewayApi() {
            return GeneratedConfigAnnotations.GATEWAY.equals(
                    config.annotations().get(GeneratedConfigAnnotations.GATEWAY_SEMANTICS));
        }
    }

    /** Merges the Gateways that apply to {@code proxy}, oldest first (istiod's PushContext.mergeGateways). */
    public static MergedGateway of(Proxy proxy, PushContext push) {
        Map<PortKey, List<GatewayServer>> byPort = new LinkedHashMap<>();
        Map<PortKey, Boolean> httpPort = new LinkedHashMap<>();
        Map<PortKey, Set<String>> tlsHosts = new HashMap<>();
        List<String> rejected = new ArrayList<>();
        List<Selected> selected = select(proxy, push);
        if (push.gatewayApi().strictMerging()) {
            selected = strictMerging(selected, rejected);
        }
        // istiod's resolvePorts for label-selected Gateways: a server port the gateway's own service maps
        // to a target port listens there, any other port as it is
        Map<Integer, Integer> legacyTargetPorts = new HashMap<>();
        for (InboundPorts.InboundPort p : InboundPorts.of(proxy, push)) {
            legacyTargetPorts.putIfAbsent(p.servicePort().port(), p.targetPort());
        }
        for (Selected sel : selected) {
            Config c = sel.config();
            Gateway gw = (Gateway) c.spec();
            String key = c.namespace() + "/" + c.name();
            for (Server server : gw.getServersList()) {
                List<Integer> resolved = sel.legacySelector()
                        ? List.of(legacyTargetPorts.getOrDefault(server.getPort().getNumber(), server.getPort().getNumber()))
                        : serviceTargetPorts(server.getPort().getNumber(), sel.targets());
                if (resolved.isEmpty()) {
                    rejected.add(key + ": server " + describe(server) + " skipped: no service of "
                            + c.annotations().get(GeneratedConfigAnnotations.GATEWAY_SERVICE) + " on this proxy has port "
                            + server.getPort().getNumber());
                }
                for (int number : resolved) {
                    merge(new PortKey(number, server.getBind()), key, c, server, byPort, httpPort, tlsHosts, rejected);
                }
            }
        }
        List<ServerPort> ports = new ArrayList<>();
        byPort.forEach((at, servers) -> ports.add(new ServerPort(at.number(), at.bind(), httpPort.get(at), servers)));
        return new MergedGateway(ports, rejected, selected.stream().map(Selected::config).toList());
    }

    /**
     * istiod's mergeGateways selection: a Gateway naming services applies where the proxy is an
     * endpoint of one of them in the Gateway's (or its parent's) namespace; a Gateway without a
     * selector applies to every router; otherwise its selector's labels must be the proxy's.
     */
    private static List<Selected> select(Proxy proxy, PushContext push) {
        List<Selected> out = new ArrayList<>();
        List<InboundPorts.InboundPort> targets = null;
        for (Config c : push.gateways()) {
            String services = c.annotations().get(GeneratedConfigAnnotations.GATEWAY_SERVICE);
            if (services == null) {
                if (selects((Gateway) c.spec(), proxy)) {
                    out.add(new Selected(c, true, List.of()));
                }
                continue;
            }
            if (targets == null) {
                targets = InboundPorts.serviceTargets(proxy, push);
            }
            Set<String> names = Set.of(services.split(","));
            String namespace = c.annotations().getOrDefault(GeneratedConfigAnnotations.PARENT_NAMESPACE, "");
            String serviceNamespace = namespace.isEmpty() ? c.namespace() : namespace;
            List<InboundPorts.InboundPort> matching = targets.stream()
                    .filter(t -> t.service() != null && names.contains(t.service().hostname())
                            && t.service().namespace().equals(serviceNamespace))
                    .toList();
            if (!matching.isEmpty()) {
                out.add(new Selected(c, false, matching));
            }
        }
        return out;
    }

    /**
     * istiod's filterStrictGatewayMerging (PILOT_ENABLE_STRICT_GATEWAY_MERGING): once a managed
     * Gateway API Gateway (gateway semantics and a service account) applies, classic Gateways of
     * other namespaces do not, so they cannot take its credentials or ports.
     */
    private static List<Selected> strictMerging(List<Selected> selected, List<String> rejected) {
        Set<String> managedNamespaces = new HashSet<>();
        selected.stream().filter(Selected::managedGatewayApi).forEach(s -> managedNamespaces.add(s.config().namespace()));
        if (managedNamespaces.isEmpty()) {
            return selected;
        }
        List<Selected> out = new ArrayList<>();
        for (Selected s : selected) {
            if (s.gatewayApi() || managedNamespaces.contains(s.config().namespace())) {
                out.add(s);
            } else {
                rejected.add(s.config().namespace() + "/" + s.config().name() + ": skipped by strict gateway merging: "
                        + "not in the namespace of a managed Gateway API gateway " + new TreeSet<>(managedNamespaces));
            }
        }
        return out;
    }

    /**
     * istiod's resolvePorts for a Gateway selected by service: the server port is a port of
     * the services, the listener each target port it maps to on this proxy; no fallback.
     */
    private static List<Integer> serviceTargetPorts(int servicePort, List<InboundPorts.InboundPort> targets) {
        return targets.stream().filter(t -> t.servicePort().port() == servicePort).map(InboundPorts.InboundPort::targetPort)
                .collect(Collectors.toCollection(TreeSet::new)).stream().toList();
    }

    private static void merge(PortKey at, String key, Config c, Server server, Map<PortKey, List<GatewayServer>> byPort,
                              Map<PortKey, Boolean> httpPort, Map<PortKey, Set<String>> tlsHosts, List<String> rejected) {
        int number = at.number();
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
            return;
        }
        if (existing != null && !plainHttp && !server.hasTls()) {
            rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe()
                    + " already has a server and a plain TCP server cannot share it");
            return;
        }
        if (existing != null && !plainHttp && byPort.get(at).stream()
                .anyMatch(o -> !o.server().hasTls())) {
            rejected.add(key + ": server " + describe(server) + " skipped: port " + at.describe()
                    + " already has a plain TCP server");
            return;
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
                return;
            }
            taken.addAll(sni);
        }
        httpPort.put(at, plainHttp);
        byPort.computeIfAbsent(at, n -> new ArrayList<>()).add(gs);
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
