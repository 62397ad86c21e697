package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import io.meshpilot.util.IpAddr;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The status stanzas of Gateways and their listeners as istiod writes them
 * (pilot/pkg/config/kube/gateway reportGatewayStatus, reportUnmanagedGatewayStatus,
 * gatewaycommon ReportListenerCondition, ReportListenerConflict, SetProgrammedCondition):
 * conditions merged into the object's current status so unchanged ones keep their
 * transition time, addresses once known never removed, listeners of removed spec entries pruned.
 */
public final class GatewayStatusReport {
    static final String ADDRESS_TYPE_OVERRIDE = "networking.istio.io/address-type";
    private static final String CONFLICT_MESSAGE = "Listener has a conflict with another listener attached to the same Gateway";

    private GatewayStatusReport() {
    }

    /** The status listener entry at {@code index} with {@code conditions} and the listener's supported kinds. */
    public static void listener(JsonArray statusListeners, int index, JsonObject listener, long generation,
                                Map<String, Condition> conditions, Instant now) {
        while (statusListeners.size() <= index) {
            statusListeners.add(new JsonObject());
        }
        JsonElement have = statusListeners.get(index);
        JsonArray existing = have.isJsonObject() && have.getAsJsonObject().has("conditions")
                && have.getAsJsonObject().get("conditions").isJsonArray()
                ? have.getAsJsonObject().getAsJsonArray("conditions") : new JsonArray();
        ListenerConversion.SupportedKinds kinds = ListenerConversion.supportedKinds(listener);
        Map<String, Condition> all = new LinkedHashMap<>(conditions);
        if (!kinds.valid()) {
            all.put(ListenerConversion.RESOLVED_REFS, Condition.of(Condition.FALSE, "InvalidRouteKinds",
                    "Invalid route kinds"));
        }
        JsonObject entry = new JsonObject();
        entry.addProperty("name", JsonFields.string(listener, "name"));
        entry.addProperty("attachedRoutes", 0);
        JsonArray supported = new JsonArray();
        for (String groupKind : kinds.groupKinds()) {
            JsonObject k = new JsonObject();
            int slash = groupKind.indexOf('/');
            k.addProperty("group", groupKind.substring(0, slash));
            k.addProperty("kind", groupKind.substring(slash + 1));
            supported.add(k);
        }
        entry.add("supportedKinds", supported);
        entry.add("conditions", Conditions.set(existing, generation, all, now));
        statusListeners.set(index, entry);
    }

    /** A listener in conflict with an earlier one on the same port: not accepted, not programmed, Conflicted. */
    public static void conflict(JsonArray statusListeners, int index, JsonObject listener, long generation, String reason,
                                Instant now) {
        ConfigError error = new ConfigError(reason, CONFLICT_MESSAGE);
        Map<String, Condition> conditions = new LinkedHashMap<>();
        conditions.put(ListenerConversion.ACCEPTED, Condition.ok("", "").withError(error));
        conditions.put(ListenerConversion.PROGRAMMED, Condition.ok("", "").withError(error));
        conditions.put(ListenerConversion.CONFLICTED, Condition.ok(reason, CONFLICT_MESSAGE));
        listener(statusListeners, index, listener, generation, conditions, now);
    }

    /**
     * istiod's SetProgrammedCondition: "Resource programmed, assigned to service(s) ..." when instances
     * were found, an error when no service is named or some address could not be assigned.
     */
    public static Condition programmed(Condition programmed, GatewayAddresses addresses, List<String> services) {
        Condition out = programmed;
        if (!addresses.internal().isEmpty()) {
            out = out.withReason(out.reason(), "Resource programmed, assigned to service(s) "
                    + humanReadableJoin(addresses.internal()));
        }
        if (services.isEmpty()) {
            return out.withError(new ConfigError("UnsupportedAddress", "Failed to assign to any requested addresses"));
        }
        if (!addresses.warnings().isEmpty()) {
            String warnings = String.join("; ", addresses.warnings());
            String message = addresses.internal().isEmpty() ? "Failed to assign to any requested addresses: " + warnings
                    : "Assigned to service(s) " + humanReadableJoin(addresses.internal())
                    + ", but failed to assign to all requested addresses: " + warnings;
            return out.withError(new ConfigError(addresses.allUsable() ? "AddressNotAssigned" : "AddressNotUsable",
                    message));
        }
        return out;
    }

    /**
     * What one Gateway's status needs beyond its listeners.
     *
     * @param gatewayError       parametersRef or address problem; null when none
     * @param backendTlsError    {@code spec.tls.backend} client certificate problem; null when none
     * @param validListeners     listeners that are programmed
     * @param listenerSets       ListenerSets attached
     * @param addressType        the class's address type ({@code Hostname}, {@code IPAddress}, empty for both)
     */
    public record GatewayFacts(GatewayAddresses addresses, List<String> services, ConfigError gatewayError,
                               ConfigError backendTlsError, int validListeners, int listenerSets, String addressType) {
    }

    /** istiod's reportGatewayStatus into {@code status} (the Gateway's status, listeners already reported). */
    public static void gateway(JsonObject gateway, Map<String, String> annotations, long generation, JsonObject status,
                               GatewayFacts facts, Instant now) {
        Map<String, Condition> conditions = new LinkedHashMap<>();
        Condition accepted = Condition.ok("Accepted", "Resource accepted");
        int total = JsonFields.objects(gateway, "listeners").size();
        if (facts.gatewayError() != null) {
            accepted = accepted.withError(facts.gatewayError());
        } else if (total > 0 && facts.validListeners() < total) {
            accepted = facts.validListeners() == 0
                    ? accepted.withError(new ConfigError("ListenersNotValid", "None of the Gateway's listeners are valid"))
                    : accepted.withReason("ListenersNotValid", "One or more of the Gateway's listeners are invalid");
        }
        conditions.put("Accepted", accepted);
        Condition resolved = Condition.ok("ResolvedRefs", "All references resolved");
        conditions.put("ResolvedRefs", facts.backendTlsError() == null ? resolved : resolved.withError(facts.backendTlsError()));
        if (facts.listenerSets() != 0) {
            status.addProperty("attachedListenerSets", facts.listenerSets());
        }
        JsonArray existing = conditionsOf(status);
        Optional<JsonObject> frontend = JsonFields.optionalObject(JsonFields.object(gateway, "tls"), "frontend");
        if (frontend.isPresent()) {
            if (insecureFrontend(frontend.get())) {
                conditions.put("InsecureFrontendValidationMode", Condition.ok("ConfigurationChanged",
                        "Gateway is operating in AllowInsecureFallback mode for frontend validation"));
            } else {
                existing = Conditions.remove(existing, "InsecureFrontendValidationMode");
            }
        }
        conditions.put("Programmed", programmed(Condition.ok("Programmed", "Resource programmed"), facts.addresses(),
                facts.services()));
        List<String> report = reportedAddresses(annotations, facts.addresses(), facts.addressType());
        if (!report.isEmpty()) {
            status.add("addresses", addresses(report));
        }
        pruneListeners(status, gateway);
        status.add("conditions", Conditions.set(existing, generation, conditions, now));
    }

    /** istiod's reportUnmanagedGatewayStatus: a remote Gateway is accepted and declared programmed, with its spec addresses. */
    public static JsonObject unmanaged(JsonObject gatewaySpec, long generation, JsonObject existingStatus, Instant now) {
        JsonObject status = existingStatus.deepCopy();
        JsonArray addresses = new JsonArray();
        for (JsonObject a : JsonFields.objects(gatewaySpec, "addresses")) {
            addresses.add(a.deepCopy());
        }
        if (addresses.isEmpty()) {
            status.remove("addresses");
        } else {
            status.add("addresses", addresses);
        }
        status.remove("listeners");
        Map<String, Condition> conditions = new LinkedHashMap<>();
        conditions.put("Accepted", Condition.ok("Accepted", "Resource accepted"));
        conditions.put("Programmed", Condition.ok("Programmed", "This Gateway is remote; Istio will not program it"));
        status.add("conditions", Conditions.set(conditionsOf(status), generation, conditions, now));
        return status;
    }

    /** Each listener's attachedRoutes from {@code counts} by listener name (istiod's FinalGatewayStatusCollection). */
    public static JsonObject withAttachedRoutes(JsonObject status, Map<String, Integer> counts) {
        JsonObject out = status.deepCopy();
        if (out.has("listeners") && out.get("listeners").isJsonArray()) {
            for (JsonElement e : out.getAsJsonArray("listeners")) {
                if (e.isJsonObject()) {
                    JsonObject l = e.getAsJsonObject();
                    l.addProperty("attachedRoutes", counts.getOrDefault(JsonFields.string(l, "name"), 0));
                }
            }
        }
        return out;
    }

    /** The object's {@code listeners} status, for reporting into by index. */
    public static JsonArray listenersOf(JsonObject status) {
        if (!status.has("listeners") || !status.get("listeners").isJsonArray()) {
            status.add("listeners", new JsonArray());
        }
        return status.getAsJsonArray("listeners");
    }

    static JsonArray conditionsOf(JsonObject status) {
        return status.has("conditions") && status.get("conditions").isJsonArray()
                ? status.getAsJsonArray("conditions") : new JsonArray();
    }

    /** Drops status listeners whose listener left the spec (the first entry of each name is kept). */
    static void pruneListeners(JsonObject status, JsonObject spec) {
        Set<String> have = new HashSet<>();
        JsonFields.objects(spec, "listeners").forEach(l -> have.add(JsonFields.string(l, "name")));
        JsonArray kept = new JsonArray();
        for (JsonElement e : listenersOf(status)) {
            if (e.isJsonObject() && have.remove(JsonFields.string(e.getAsJsonObject(), "name"))) {
                kept.add(e);
            }
        }
        status.add("listeners", kept);
    }

    private static boolean insecureFrontend(JsonObject frontend) {
        if ("AllowInsecureFallback".equals(JsonFields.string(JsonFields.object(JsonFields.object(frontend, "default"),
                "validation"), "mode"))) {
            return true;
        }
        return JsonFields.objects(frontend, "perPort").stream().anyMatch(p -> "AllowInsecureFallback".equals(
                JsonFields.string(JsonFields.object(JsonFields.object(p, "tls"), "validation"), "mode")));
    }

    /** External addresses, else the internal ones of the class's type (annotation may override). */
    private static List<String> reportedAddresses(Map<String, String> annotations, GatewayAddresses addresses,
                                                  String classAddressType) {
        if (!addresses.external().isEmpty()) {
            return addresses.external();
        }
        String want = annotations.getOrDefault(ADDRESS_TYPE_OVERRIDE, classAddressType);
        List<String> out = new ArrayList<>();
        if (!want.equals(ClassInfos.HOSTNAME_ADDRESS)) {
            out.addAll(addresses.internalIps());
        }
        if (!want.equals("IPAddress")) {
            for (String hostPort : addresses.internal()) {
                String host = hostPort.substring(0, hostPort.lastIndexOf(':'));
                if (!addresses.pending().contains(host) && !out.contains(host)) {
                    out.add(host);
                }
            }
        }
        return out;
    }

    private static JsonArray addresses(List<String> values) {
        JsonArray out = new JsonArray();
        for (String v : values) {
            JsonObject a = new JsonObject();
            a.addProperty("type", IpAddr.isAddress(v) ? "IPAddress" : "Hostname");
            a.addProperty("value", v);
            out.add(a);
        }
        return out;
    }

    /** istiod's HumanReadableJoin: {@code a}, {@code a and b}, {@code a, b, and c}. */
    static String humanReadableJoin(List<String> items) {
        return switch (items.size()) {
            case 0 -> "";
            case 1 -> items.get(0);
            case 2 -> items.get(0) + " and " + items.get(1);
            default -> String.join(", ", items.subList(0, items.size() - 1)) + ", and " + items.get(items.size() - 1);
        };
    }
}
