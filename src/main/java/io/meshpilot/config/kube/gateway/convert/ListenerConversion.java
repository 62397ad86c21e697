package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.Port;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.util.LabelSelector;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * One Gateway (or ListenerSet) listener into one Istio server and the listener's conditions
 * (istiod's buildListener, listenerProtocolToIstio, buildHostnameMatch, namespacesFromSelector
 * and GenerateGatewaySupportedKinds).
 */
public final class ListenerConversion {
    static final String ACCEPTED = "Accepted";
    static final String PROGRAMMED = "Programmed";
    static final String CONFLICTED = "Conflicted";
    static final String RESOLVED_REFS = "ResolvedRefs";
    static final String NO_ERRORS = "No errors found";
    private static final String UNSUPPORTED_PROTOCOL = "UnsupportedProtocol";
    private static final Set<String> PROTOCOLS = Set.of("HTTP", "HTTPS", "TLS", "TCP");
    /** Istio's tunnel protocol (protocol.HBONE): CONNECT over mTLS HTTP/2, a waypoint's only listener. */
    private static final String HBONE = "HBONE";
    /** Where HBONE is served (istiod's unexpectedWaypointListener). */
    private static final int WAYPOINT_PORT = 15008;
    private static final String NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

    /**
     * What one listener became.
     *
     * @param server      the Istio server; null when the listener has none (HTTPS or TLS without {@code tls})
     * @param conditions  the listener's conditions by type
     * @param programmed  whether it is valid (istiod's {@code ok})
     */
    public record Listener(Server server, Map<String, Condition> conditions, boolean programmed) {
    }

    /** The route kinds a listener admits and whether all its {@code allowedRoutes.kinds} are supported. */
    public record SupportedKinds(List<String> groupKinds, boolean valid) {
        public SupportedKinds {
            groupKinds = List.copyOf(groupKinds);
        }
    }

    private final GatewayTlsConversion tls;
    private final Map<String, Map<String, String>> namespaceLabels;

    public ListenerConversion(GatewayTlsConversion tls, Map<String, Map<String, String>> namespaceLabels) {
        this.tls = tls;
        this.namespaceLabels = namespaceLabels;
    }

    /**
     * @param owner       the Gateway or ListenerSet
     * @param gateway     the Gateway (the owner itself, or a ListenerSet's parent) for labels and frontend TLS
     * @param listener    the listener, its port already defaulted for ListenerSets
     * @param portError   why a ListenerSet listener has no port; null when it has one
     * @param waypoint    whether the Gateway's class is the waypoint class (HBONE allowed, expected on 15008)
     */
    public Listener convert(GatewayApiObject owner, GatewayApiObject gateway, JsonObject listener, String portError,
                            boolean waypoint) {
        Map<String, Condition> conditions = new LinkedHashMap<>();
        conditions.put(ACCEPTED, Condition.ok(ACCEPTED, NO_ERRORS));
        conditions.put(PROGRAMMED, Condition.ok(PROGRAMMED, NO_ERRORS));
        conditions.put(CONFLICTED, Condition.of(Condition.FALSE, "NoConflicts", NO_ERRORS));
        conditions.put(RESOLVED_REFS, Condition.ok(RESOLVED_REFS, NO_ERRORS));
        boolean ok = true;
        GatewayTlsConversion.Tls serverTls = tls.build(owner, gateway.spec(), listener,
                GatewayTlsConversion.autoPassthrough(owner.labels(), listener));
        if (serverTls.error() != null) {
            ConfigError e = serverTls.error();
            conditions.compute(RESOLVED_REFS, (k, c) -> c.withError(e));
            conditions.compute(PROGRAMMED, (k, c) -> c.withError(new ConfigError("Invalid", "Bad TLS configuration")));
            if (e.reason().equals(GatewayTlsConversion.INVALID_CA_CERTIFICATE_REF)
                    || e.reason().equals(GatewayTlsConversion.INVALID_CA_CERTIFICATE_KIND)
                    || e.reason().equals(GatewayTlsConversion.REF_NOT_PERMITTED)) {
                conditions.compute(ACCEPTED, (k, c) -> c.withError(new ConfigError("NoValidCACertificate", e.message())));
            }
            ok = false;
        }
        if (portError != null) {
            conditions.compute(ACCEPTED, (k, c) -> c.withError(new ConfigError(UNSUPPORTED_PROTOCOL, portError)));
            ok = false;
        }
        String protocol = JsonFields.string(listener, "protocol");
        Optional<String> protocolError = protocolError(protocol, waypoint);
        if (protocolError.isPresent()) {
            conditions.compute(ACCEPTED, (k, c) -> c.withError(new ConfigError(UNSUPPORTED_PROTOCOL,
                    protocolError.get())));
            ok = false;
        }
        if (waypoint && (JsonFields.integer(listener, "port", 0) != WAYPOINT_PORT || !protocol.equals(HBONE))) {
            // istiod warns rather than rejects (unexpectedWaypointListener): the listener stays programmed
            conditions.compute(ACCEPTED, (k, c) -> c.withError(new ConfigError(UNSUPPORTED_PROTOCOL,
                    "Expected a single listener on port " + WAYPOINT_PORT + " with protocol \"" + HBONE + "\"")));
        }
        Server server = null;
        if (serverTls.settings() != null || !(protocol.equals("HTTPS") || protocol.equals("TLS"))) {
            Server.Builder b = Server.newBuilder()
                    .setPort(Port.newBuilder().setName("default").setNumber(JsonFields.integer(listener, "port", 0))
                            .setProtocol(protocolError.isPresent() ? "" : protocol))
                    .addAllHosts(hostnames(owner.namespace(), listener));
            if (serverTls.settings() != null) {
                b.setTls(serverTls.settings());
            }
            server = b.build();
        } else if (owner.kind().equals(GatewayApiKinds.LISTENER_SET)) {
            // A Gateway's HTTPS listener without tls is a placeholder for ListenerSets to fill; a ListenerSet's is an error.
            ok = false;
            conditions.compute(ACCEPTED, (k, c) -> c.withError(new ConfigError(UNSUPPORTED_PROTOCOL,
                    "protocol is " + protocol + " but no TLS section is defined")));
            conditions.compute(PROGRAMMED, (k, c) -> c.withError(new ConfigError("Invalid", "Bad TLS configuration")));
        }
        return new Listener(server, conditions, ok);
    }

    /**
     * The server's hosts: the listener hostname ({@code *} when unset) for each namespace routes may
     * come from ({@code <gateway ns>/h} by default, {@code *}/h for All, each selected namespace sorted),
     * or {@code ~/h} (no namespace) when the selector matches none.
     */
    public List<String> hostnames(String localNamespace, JsonObject listener) {
        String hostname = JsonFields.optionalString(listener, "hostname").orElse("*");
        List<String> hosts = new ArrayList<>();
        for (String ns : allowedNamespaces(localNamespace, JsonFields.object(listener, "allowedRoutes"))) {
            if (!ns.isEmpty()) {
                hosts.add(ns + "/" + hostname);
            }
        }
        return hosts.isEmpty() ? List.of("~/" + hostname) : hosts;
    }

    private List<String> allowedNamespaces(String localNamespace, JsonObject allowedRoutes) {
        JsonObject namespaces = JsonFields.object(allowedRoutes, "namespaces");
        String from = JsonFields.optionalString(namespaces, "from").orElse("Same");
        if (from.equals("Same")) {
            return List.of(localNamespace);
        }
        if (from.equals("All")) {
            return List.of("*");
        }
        Optional<JsonObject> selector = JsonFields.optionalObject(namespaces, "selector");
        if (selector.isEmpty()) {
            return List.of("*");
        }
        Optional<LabelSelector> parsed = labelSelector(selector.get());
        if (parsed.isEmpty()) {
            return List.of();
        }
        TreeSet<String> matching = new TreeSet<>();
        namespaceLabels.forEach((name, labels) -> {
            if (parsed.get().matches(withNameLabel(name, labels))) {
                matching.add(name);
            }
        });
        return List.copyOf(matching);
    }

    /**
     * Whether a namespace's labels (with {@code kubernetes.io/metadata.name} implied, as istiod's
     * toNamespaceSet) match {@code selector}; false for a selector Kubernetes would reject.
     */
    public boolean namespaceSelected(JsonObject selector, String namespace) {
        Map<String, String> labels = namespaceLabels.get(namespace);
        if (labels == null) {
            return false;
        }
        return selects(selector, namespace, labels);
    }

    /** Whether a Gateway API namespace {@code selector} selects {@code namespace}, labelled {@code labels}. */
    public static boolean selects(JsonObject selector, String namespace, Map<String, String> labels) {
        return labelSelector(selector).map(s -> s.matches(withNameLabel(namespace, labels))).orElse(false);
    }

    /** A Kubernetes label selector; empty when an operator is unknown (istiod's LabelSelectorAsSelector fails). */
    static Optional<LabelSelector> labelSelector(JsonObject selector) {
        List<LabelSelector.Requirement> requirements = new ArrayList<>();
        for (JsonObject e : JsonFields.objects(selector, "matchExpressions")) {
            String operator = JsonFields.string(e, "operator");
            if (!LabelSelector.OPERATORS.contains(operator)) {
                return Optional.empty();
            }
            requirements.add(new LabelSelector.Requirement(JsonFields.string(e, "key"), operator,
                    new LinkedHashSet<>(JsonFields.strings(e, "values"))));
        }
        return Optional.of(new LabelSelector(JsonFields.stringMap(selector, "matchLabels"), requirements));
    }

    private static Map<String, String> withNameLabel(String name, Map<String, String> labels) {
        if (name.equals(labels.get(NAMESPACE_NAME_LABEL))) {
            return labels;
        }
        Map<String, String> copy = new HashMap<>(labels);
        copy.put(NAMESPACE_NAME_LABEL, name);
        return copy;
    }

    /**
     * istiod's listenerProtocolToIstio: HTTP, HTTPS, TLS and TCP; HBONE only for the waypoint class
     * (the east-west class, which also takes it, is not served).
     */
    static Optional<String> protocolError(String protocol, boolean waypoint) {
        if (PROTOCOLS.contains(protocol) || waypoint && protocol.equals(HBONE)) {
            return Optional.empty();
        }
        if (protocol.equals(HBONE)) {
            return Optional.of("protocol \"HBONE\" is only supported for waypoint proxies");
        }
        String upper = protocol.toUpperCase(Locale.ROOT);
        if (PROTOCOLS.contains(upper) || upper.equals(HBONE)) {
            return Optional.of("protocol \"" + protocol + "\" is unsupported. hint: \"" + upper
                    + "\" (uppercase) may be supported");
        }
        return Optional.of("protocol \"" + protocol + "\" is unsupported");
    }

    /**
     * istiod's GenerateGatewaySupportedKinds: HTTP and HTTPS admit HTTPRoute and GRPCRoute, TCP
     * TCPRoute, TLS TLSRoute (and TCPRoute when terminating); narrowed to {@code allowedRoutes.kinds},
     * invalid when any of those is not supported.
     */
    public static SupportedKinds supportedKinds(JsonObject listener) {
        String group = GatewayApiKinds.GROUP + "/";
        List<String> supported = switch (JsonFields.string(listener, "protocol")) {
            case "HTTP", "HTTPS" -> List.of(group + GatewayApiKinds.HTTP_ROUTE, group + GatewayApiKinds.GRPC_ROUTE);
            case "TCP" -> List.of(group + GatewayApiKinds.TCP_ROUTE);
            case "TLS" -> "Terminate".equals(JsonFields.string(JsonFields.object(listener, "tls"), "mode"))
                    ? List.of(group + GatewayApiKinds.TLS_ROUTE, group + GatewayApiKinds.TCP_ROUTE)
                    : List.of(group + GatewayApiKinds.TLS_ROUTE);
            default -> List.of();
        };
        List<JsonObject> allowed = JsonFields.objects(JsonFields.object(listener, "allowedRoutes"), "kinds");
        if (allowed.isEmpty()) {
            return new SupportedKinds(supported, true);
        }
        List<String> wanted = allowed.stream().map(k -> JsonFields.optionalString(k, "group").orElse(GatewayApiKinds.GROUP)
                + "/" + JsonFields.string(k, "kind")).toList();
        List<String> intersection = supported.stream().filter(wanted::contains).toList();
        return new SupportedKinds(intersection, intersection.size() == allowed.size());
    }
}
