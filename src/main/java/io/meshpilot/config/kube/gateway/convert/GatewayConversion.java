package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.ParentKey;
import io.meshpilot.config.kube.gateway.ParentListener;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.kube.gateway.RouteAttachment;
import io.meshpilot.config.kube.gateway.RouteParents;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * Gateways, ListenerSets and GatewayClasses into Istio Gateways and the listeners routes may
 * attach to (istiod's GatewayCollection, ListenerSetCollection, GatewayClassesCollection and
 * the final status collections): one Istio Gateway per valid listener, the RouteParents index of
 * every listener (valid or not) plus the mesh, and the status of every object of ours once the
 * routes attached to each listener are known.
 */
public final class GatewayConversion {
    /** istiod's meshParentKey listener: routes with a Service parent bind to the mesh, any route kind. */
    static final ParentListener MESH = new ParentListener("mesh", GatewayApiKinds.ROUTE_KINDS.stream()
            .map(k -> GatewayApiKinds.GROUP + "/" + k).toList(), List.of(), "", "", 0, "");

    private GatewayConversion() {
    }

    /**
     * @param gateways  Istio Gateways
     * @param parents   the listeners routes may attach to
     * @param statuses  the Gateway, ListenerSet and GatewayClass statuses once the routes attached to each
     *                  listener are known
     * @param problems  what could not be converted, by object
     * @param services  the Services (hostnames) the Gateways bind to, waypoints' included
     */
    public record Output(List<Config> gateways, RouteParents parents,
                         Function<List<RouteAttachment>, Map<ConfigKey, JsonObject>> statuses,
                         Map<ConfigKey, List<String>> problems, Set<String> services) {
        public Map<ConfigKey, JsonObject> statuses(List<RouteAttachment> attachments) {
            return statuses.apply(attachments);
        }
    }

    public static Output convert(GatewayApiInputs inputs, ReferenceGrants grants) {
        Instant now = Instant.now();
        GatewayApiInputs.Settings settings = inputs.settings();
        ClassInfos classes = ClassInfos.of(settings, inputs.ofKind(GatewayApiKinds.GATEWAY_CLASS));
        GatewayTlsConversion tls = new GatewayTlsConversion(inputs, grants);
        ListenerConversion listeners = new ListenerConversion(tls, inputs.namespaceLabels());
        ListenerSetConversion listenerSets = new ListenerSetConversion(classes, listeners, inputs.services(),
                settings.domainSuffix(), settings.manualDeployment(), now);

        Map<ConfigKey, JsonObject> statuses = new TreeMap<>();
        Map<ConfigKey, List<String>> problems = new TreeMap<>();
        for (GatewayApiObject gatewayClass : inputs.ofKind(GatewayApiKinds.GATEWAY_CLASS)) {
            classes.status(gatewayClass, now).ifPresent(s -> statuses.put(gatewayClass.key(), s));
        }

        Map<String, GatewayApiObject> gateways = new LinkedHashMap<>();
        inputs.ofKind(GatewayApiKinds.GATEWAY).forEach(g -> gateways.put(g.namespace() + "/" + g.name(), g));
        Map<String, ListenerConflicts> conflicts = new HashMap<>();
        for (GatewayApiObject gateway : gateways.values()) {
            conflicts.put(gateway.namespace() + "/" + gateway.name(), conflicts(gateway, classes, listenerSets,
                    inputs.ofKind(GatewayApiKinds.LISTENER_SET)));
        }

        Map<String, List<GeneratedListener>> fromListenerSets = new HashMap<>();
        for (GatewayApiObject set : inputs.ofKind(GatewayApiKinds.LISTENER_SET)) {
            String parent = ListenerSetConversion.parentKey(set);
            ListenerSetConversion.Converted converted = listenerSets.convert(set, gateways,
                    conflicts.getOrDefault(parent, ListenerConflicts.none()));
            if (converted.status() != null) {
                statuses.put(set.key(), converted.status());
                listenerProblems(set, converted.status(), problems);
            }
            fromListenerSets.computeIfAbsent(parent, k -> new ArrayList<>()).addAll(converted.listeners());
        }

        List<GeneratedListener> generated = new ArrayList<>();
        Set<String> services = new HashSet<>();
        for (GatewayApiObject gateway : gateways.values()) {
            String key = gateway.namespace() + "/" + gateway.name();
            convertGateway(gateway, classes, listeners, tls, inputs, conflicts.get(key),
                    fromListenerSets.getOrDefault(key, List.of()), now, generated, services).ifPresent(status -> {
                        statuses.put(gateway.key(), status);
                        listenerProblems(gateway, status, problems);
                    });
        }

        Map<ParentKey, List<ParentListener>> parents = new LinkedHashMap<>();
        parents.put(ParentKey.MESH, List.of(MESH));
        generated.forEach(g -> parents.computeIfAbsent(g.parent(), k -> new ArrayList<>()).add(g.listener()));
        List<Config> configs = generated.stream().filter(GeneratedListener::valid).map(GeneratedListener::config)
                .sorted(Comparator.comparing((Config c) -> Optional.ofNullable(c.creationTimestamp()).orElse(Instant.EPOCH))
                        .thenComparing(Config::namespace).thenComparing(Config::name))
                .toList();
        Map<ConfigKey, JsonObject> partial = Map.copyOf(statuses);
        return new Output(configs, new RouteParents(parents), attachments -> finalStatuses(partial, attachments),
                problems, Set.copyOf(services));
    }

    /** Conflicts among the Gateway's listeners and its allowed ListenerSets'; none for classes without ListenerSets. */
    private static ListenerConflicts conflicts(GatewayApiObject gateway, ClassInfos classes,
                                               ListenerSetConversion listenerSets, List<GatewayApiObject> sets) {
        Optional<ClassInfos.ResolvedClass> resolved = classes.resolve(JsonFields.string(gateway.spec(), "gatewayClassName"));
        if (resolved.isEmpty() || !resolved.get().info().supportsListenerSet()) {
            return ListenerConflicts.none();
        }
        String key = gateway.namespace() + "/" + gateway.name();
        List<GatewayApiObject> eligible = sets.stream().filter(s -> ListenerSetConversion.parentKey(s).equals(key))
                .filter(s -> listenerSets.allowedBy(gateway, s.namespace())).toList();
        return ListenerConflicts.of(gateway, eligible);
    }

    /**
     * istiod's GatewayCollection for one Gateway; empty when it is not ours.
     *
     * @param generated the Gateway's listeners are added to it
     * @param services  the Services the Gateway binds to are added to it
     */
    private static Optional<JsonObject> convertGateway(GatewayApiObject gateway, ClassInfos classes,
                                                       ListenerConversion listeners, GatewayTlsConversion tls,
                                                       GatewayApiInputs inputs, ListenerConflicts conflicts,
                                                       List<GeneratedListener> fromListenerSets, Instant now,
                                                       List<GeneratedListener> generated, Set<String> services) {
        Optional<ClassInfos.ResolvedClass> resolved = classes.resolve(JsonFields.string(gateway.spec(), "gatewayClassName"));
        if (resolved.isEmpty()) {
            return Optional.empty();
        }
        ClassInfos.ClassInfo info = resolved.get().info();
        if (info.disableRouteGeneration()) {
            return Optional.of(GatewayStatusReport.unmanaged(gateway.spec(), gateway.generation(), gateway.status(), now));
        }
        GatewayApiInputs.Settings settings = inputs.settings();
        JsonObject status = gateway.status();
        GatewayServiceBinding binding = GatewayServiceBinding.of(gateway, info, settings.domainSuffix(),
                settings.manualDeployment());
        services.addAll(binding.services());
        if (binding.services().isEmpty() && binding.error() != null) {
            report(gateway, status, info, inputs, binding, binding.error(), tls, List.of(), 0, 0, now);
            return Optional.of(status);
        }
        ConfigError gatewayError = binding.error() != null ? binding.error() : parametersRefProblem(gateway, inputs);
        List<Server> servers = new ArrayList<>();
        JsonArray statusListeners = GatewayStatusReport.listenersOf(status);
        int valid = 0;
        List<JsonObject> specListeners = JsonFields.objects(gateway.spec(), "listeners");
        for (int i = 0; i < specListeners.size(); i++) {
            JsonObject listener = specListeners.get(i);
            String name = JsonFields.string(listener, "name");
            String conflict = conflicts.of(gateway.key()).get(name);
            if (conflict != null) {
                GatewayStatusReport.conflict(statusListeners, i, listener, gateway.generation(), conflict, now);
                continue;
            }
            ListenerConversion.Listener converted = listeners.convert(gateway, gateway, listener, null, info.waypoint());
            GatewayStatusReport.listener(statusListeners, i, listener, gateway.generation(), converted.conditions(), now);
            if (converted.programmed()) {
                valid++;
            }
            if (converted.server() == null) {
                continue;
            }
            servers.add(converted.server());
            if (info.waypoint()) {
                // a waypoint gets no Istio Gateway and no route parents: its config comes from the ambient index
                continue;
            }
            generated.add(GeneratedListener.of(gateway, gateway, binding, listener, converted.server(),
                    converted.programmed()));
        }
        Set<ParentKey> attachedSets = new HashSet<>();
        for (GeneratedListener fromSet : fromListenerSets) {
            if (fromSet.valid()) {
                attachedSets.add(fromSet.parent());
                servers.add(fromSet.server());
                generated.add(fromSet);
            }
        }
        report(gateway, status, info, inputs, binding, gatewayError, tls, servers, valid, attachedSets.size(), now);
        return Optional.of(status);
    }

    private static void report(GatewayApiObject gateway, JsonObject status, ClassInfos.ClassInfo info,
                               GatewayApiInputs inputs, GatewayServiceBinding binding, ConfigError gatewayError,
                               GatewayTlsConversion tls, List<Server> servers, int valid, int listenerSets, Instant now) {
        Set<Integer> ports = new HashSet<>();
        servers.forEach(s -> ports.add(s.getPort().getNumber()));
        GatewayAddresses addresses = GatewayAddresses.resolve(inputs.services(), gateway.namespace(), binding.services(),
                ports);
        GatewayStatusReport.gateway(gateway.spec(), gateway.annotations(), gateway.generation(), status,
                new GatewayStatusReport.GatewayFacts(addresses, binding.services(), gatewayError,
                        tls.backendClientCertificateProblem(gateway), valid, listenerSets, info.addressType()), now);
    }

    /** istiod's validateParametersRef: only an existing ConfigMap of the Gateway's namespace. */
    private static ConfigError parametersRefProblem(GatewayApiObject gateway, GatewayApiInputs inputs) {
        Optional<JsonObject> ref = JsonFields.optionalObject(JsonFields.object(gateway.spec(), "infrastructure"),
                "parametersRef");
        if (ref.isEmpty()) {
            return null;
        }
        String group = JsonFields.string(ref.get(), "group");
        String kind = JsonFields.string(ref.get(), "kind");
        if (!group.isEmpty() || !kind.equals("ConfigMap")) {
            return new ConfigError("InvalidParameters", "Unsupported parametersRef group/kind " + group + "/" + kind
                    + ", only ConfigMap is supported");
        }
        String name = JsonFields.string(ref.get(), "name");
        if (inputs.configMap(gateway.namespace(), name).isEmpty()) {
            return new ConfigError("InvalidParameters", "parametersRef ConfigMap " + gateway.namespace() + "/" + name
                    + " does not exist");
        }
        return null;
    }

    /** The status with each listener's attachedRoutes counted from the attachments. */
    private static Map<ConfigKey, JsonObject> finalStatuses(Map<ConfigKey, JsonObject> partial,
                                                            List<RouteAttachment> attachments) {
        // istiod indexes attachments by the parent's namespace/name only (RouteAttachment.To), so a Gateway and
        // a ListenerSet of the same name in one namespace share their counts; kept for identical status.
        Map<String, Map<String, Integer>> counts = new HashMap<>();
        for (RouteAttachment a : attachments) {
            counts.computeIfAbsent(a.parent().namespace() + "/" + a.parent().name(), k -> new HashMap<>())
                    .merge(a.sectionName(), 1, Integer::sum);
        }
        Map<ConfigKey, JsonObject> out = new TreeMap<>();
        partial.forEach((key, status) -> {
            JsonObject withCounts = key.kind().equals(GatewayApiKinds.GATEWAY_CLASS) ? status.deepCopy()
                    : GatewayStatusReport.withAttachedRoutes(status,
                    counts.getOrDefault(key.namespace() + "/" + key.name(), Map.of()));
            out.put(key, omitEmpty(withCounts));
        });
        return out;
    }

    /** Empty {@code listeners} and {@code addresses} are left out, as Go's omitempty does. */
    private static JsonObject omitEmpty(JsonObject status) {
        for (String field : List.of("listeners", "addresses")) {
            if (status.has(field) && status.get(field).isJsonArray() && status.getAsJsonArray(field).isEmpty()) {
                status.remove(field);
            }
        }
        return status;
    }

    /** Each listener whose Accepted or Programmed condition is False, for config-errors. */
    private static void listenerProblems(GatewayApiObject owner, JsonObject status, Map<ConfigKey, List<String>> problems) {
        List<String> found = new ArrayList<>();
        for (JsonObject c : JsonFields.objects(status, "conditions")) {
            if (Condition.FALSE.equals(JsonFields.string(c, "status")) && !JsonFields.string(c, "type").equals("Conflicted")) {
                found.add(JsonFields.string(c, "type") + ": " + JsonFields.string(c, "message"));
            }
        }
        for (JsonObject l : JsonFields.objects(status, "listeners")) {
            for (JsonObject c : JsonFields.objects(l, "conditions")) {
                boolean bad = JsonFields.string(c, "type").equals("Conflicted")
                        ? Condition.TRUE.equals(JsonFields.string(c, "status"))
                        : Condition.FALSE.equals(JsonFields.string(c, "status"));
                if (bad) {
                    found.add("listener " + JsonFields.string(l, "name") + " " + JsonFields.string(c, "type") + ": "
                            + JsonFields.string(c, "message"));
                }
            }
        }
        if (!found.isEmpty()) {
            problems.put(owner.key(), List.copyOf(found));
        }
    }
}
