package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.GatewayServices;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Predicate;

/**
 * ListenerSets into Istio Gateways served by their parent Gateway's workloads, and their
 * status (istiod's ListenerSetCollection, gatewaycommon ReportListenerSetStatus,
 * ReportUnsupportedListenerSet, ReportNotAllowedListenerSet, NamespaceAcceptedByAllowListeners).
 * A ListenerSet whose parent is not a Gateway of ours gets nothing, not even status: it may
 * belong to another controller.
 */
public final class ListenerSetConversion {
    /** A ListenerSet's generated listeners and status; status null when the ListenerSet is not ours. */
    public record Converted(List<GeneratedListener> listeners, JsonObject status) {
        public Converted {
            listeners = List.copyOf(listeners);
        }
    }

    private final ClassInfos classes;
    private final ListenerConversion listeners;
    private final GatewayServices services;
    private final String domainSuffix;
    private final boolean manualDeployment;
    private final Instant now;

    public ListenerSetConversion(ClassInfos classes, ListenerConversion listeners, GatewayServices services,
                                 String domainSuffix, boolean manualDeployment, Instant now) {
        this.classes = classes;
        this.listeners = listeners;
        this.services = services;
        this.domainSuffix = domainSuffix;
        this.manualDeployment = manualDeployment;
        this.now = now;
    }

    /** The namespace/name of the Gateway {@code spec.parentRef} names (istiod's ListenerSetParentKey; kind not checked). */
    public static String parentKey(GatewayApiObject listenerSet) {
        JsonObject ref = JsonFields.object(listenerSet.spec(), "parentRef");
        return JsonFields.optionalString(ref, "namespace").orElse(listenerSet.namespace()) + "/"
                + JsonFields.string(ref, "name");
    }

    /** A ListenerSet listener's port, HTTP 80 and HTTPS 443 when unset (istiod's ListenerEntryPortNumber). */
    public static Optional<Integer> defaultPort(JsonObject listener) {
        int port = JsonFields.integer(listener, "port", 0);
        if (port != 0) {
            return Optional.of(port);
        }
        return switch (JsonFields.string(listener, "protocol")) {
            case "HTTP" -> Optional.of(80);
            case "HTTPS" -> Optional.of(443);
            default -> Optional.empty();
        };
    }

    /**
     * Whether the Gateway's {@code spec.allowedListeners} admits ListenerSets from {@code namespace}
     * (none by default).
     */
    public boolean allowedBy(GatewayApiObject gateway, String namespace) {
        return admits(gateway.spec(), gateway.namespace(), namespace, s -> listeners.namespaceSelected(s, namespace));
    }

    /**
     * istiod's NamespaceAcceptedByAllowListeners: whether a Gateway's {@code spec} in
     * {@code gatewayNamespace} admits ListenerSets from {@code namespace}; {@code selects} tells
     * whether a {@code from: Selector} label selector selects that namespace.
     */
    public static boolean admits(JsonObject gatewaySpec, String gatewayNamespace, String namespace,
                                 Predicate<JsonObject> selects) {
        Optional<JsonObject> namespaces = JsonFields.optionalObject(JsonFields.object(gatewaySpec,
                "allowedListeners"), "namespaces");
        if (namespaces.isEmpty()) {
            return false;
        }
        switch (JsonFields.optionalString(namespaces.get(), "from").orElse("Selector")) {
            case "All":
                return true;
            case "Same":
                return namespace.equals(gatewayNamespace);
            case "Selector":
                return JsonFields.optionalObject(namespaces.get(), "selector").map(selects::test).orElse(false);
            default:
                return false;
        }
    }

    /**
     * @param gateways  every Gateway by {@code namespace/name}
     * @param conflicts the listener conflicts of the parent Gateway
     */
    public Converted convert(GatewayApiObject listenerSet, Map<String, GatewayApiObject> gateways,
                             ListenerConflicts conflicts) {
        JsonObject ref = JsonFields.object(listenerSet.spec(), "parentRef");
        if (!JsonFields.optionalString(ref, "group").orElse(GatewayApiKinds.GROUP).equals(GatewayApiKinds.GROUP)
                || !JsonFields.optionalString(ref, "kind").orElse(GatewayApiKinds.GATEWAY).equals(GatewayApiKinds.GATEWAY)) {
            return new Converted(List.of(), null);
        }
        GatewayApiObject parent = gateways.get(parentKey(listenerSet));
        if (parent == null) {
            return new Converted(List.of(), null);
        }
        String className = JsonFields.string(parent.spec(), "gatewayClassName");
        Optional<ClassInfos.ResolvedClass> resolved = classes.resolve(className);
        if (resolved.isEmpty()) {
            return new Converted(List.of(), null);
        }
        JsonObject status = listenerSet.status();
        if (!resolved.get().info().supportsListenerSet()) {
            return new Converted(List.of(), notAllowed(listenerSet, status,
                    "The \"" + className + "\" GatewayClass does not support ListenerSet"));
        }
        if (!allowedBy(parent, listenerSet.namespace())) {
            return new Converted(List.of(), notAllowed(listenerSet, status,
                    "The parent Gateway does not allow this reference; check the 'spec.allowedRoutes'"));
        }
        GatewayServiceBinding binding = GatewayServiceBinding.of(parent, resolved.get().info(), domainSuffix,
                manualDeployment);
        if (binding.services().isEmpty() && binding.error() != null) {
            report(listenerSet, parent, status, binding, List.of(), true);
            return new Converted(List.of(), status);
        }
        Map<String, String> conflicted = conflicts.of(listenerSet.key());
        List<GeneratedListener> out = new ArrayList<>();
        List<Server> servers = new ArrayList<>();
        JsonArray statusListeners = GatewayStatusReport.listenersOf(status);
        int valid = 0;
        List<JsonObject> specListeners = JsonFields.objects(listenerSet.spec(), "listeners");
        for (int i = 0; i < specListeners.size(); i++) {
            JsonObject listener = specListeners.get(i).deepCopy();
            Optional<Integer> port = defaultPort(listener);
            listener.addProperty("port", port.orElse(0));
            String name = JsonFields.string(listener, "name");
            if (conflicted.containsKey(name)) {
                GatewayStatusReport.conflict(statusListeners, i, listener, listenerSet.generation(), conflicted.get(name), now);
                continue;
            }
            String portError = port.isPresent() ? null
                    : "protocol " + JsonFields.string(listener, "protocol") + " requires a port to be set";
            ListenerConversion.Listener converted = listeners.convert(listenerSet, parent, listener, portError,
                    resolved.get().info().waypoint());
            GatewayStatusReport.listener(statusListeners, i, listener, listenerSet.generation(), converted.conditions(), now);
            if (converted.server() == null) {
                continue;
            }
            if (converted.programmed()) {
                valid++;
            }
            servers.add(converted.server());
            out.add(GeneratedListener.of(listenerSet, parent, binding, listener, converted.server(),
                    converted.programmed()));
        }
        report(listenerSet, parent, status, binding, servers, valid > 0);
        return new Converted(out, status);
    }

    /** istiod's ReportListenerSetStatus. */
    private void report(GatewayApiObject listenerSet, GatewayApiObject parent, JsonObject status,
                        GatewayServiceBinding binding, List<Server> servers, boolean listenersValid) {
        Set<Integer> ports = new HashSet<>();
        servers.forEach(s -> ports.add(s.getPort().getNumber()));
        GatewayAddresses addresses = GatewayAddresses.resolve(services, parent.namespace(), binding.services(), ports);
        Map<String, Condition> conditions = new LinkedHashMap<>();
        ConfigError listenersError = listenersValid ? null
                : new ConfigError("ListenersNotValid", "None of the ListenerSet's listeners are valid");
        Condition accepted = Condition.ok("Accepted", "Resource accepted");
        if (binding.error() != null) {
            accepted = accepted.withError(new ConfigError(binding.error().reason(),
                    "Parent not accepted: " + binding.error().message()));
        } else if (listenersError != null) {
            accepted = accepted.withError(listenersError);
        }
        conditions.put("Accepted", accepted);
        Condition programmed = GatewayStatusReport.programmed(Condition.ok("Programmed", "Resource programmed"),
                addresses, binding.services());
        conditions.put("Programmed", listenersError != null ? programmed.withError(listenersError) : programmed);
        GatewayStatusReport.pruneListeners(status, listenerSet.spec());
        status.add("conditions", Conditions.set(GatewayStatusReport.conditionsOf(status), listenerSet.generation(),
                conditions, now));
    }

    private JsonObject notAllowed(GatewayApiObject listenerSet, JsonObject status, String message) {
        ConfigError error = new ConfigError("NotAllowed", message);
        Map<String, Condition> conditions = new LinkedHashMap<>();
        conditions.put("Accepted", Condition.ok("Accepted", "").withError(error));
        conditions.put("Programmed", Condition.ok("Programmed", "").withError(error));
        status.remove("listeners");
        status.add("conditions", Conditions.set(GatewayStatusReport.conditionsOf(status), listenerSet.generation(),
                conditions, now));
        return status;
    }
}
