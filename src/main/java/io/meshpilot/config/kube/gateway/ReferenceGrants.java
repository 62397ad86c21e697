package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The cross-namespace references ReferenceGrants allow (istiod's gatewaycommon/references.go):
 * a grant in the target's namespace lets objects of a kind in another namespace refer to its
 * Secrets, ConfigMaps, Services (by name or all). Grants from or to kinds istiod does not
 * support are skipped without error, as they may be for another controller. Immutable.
 */
public final class ReferenceGrants {
    /** The {@code from} kinds istiod honours, all in the Gateway API group. */
    private static final Set<String> FROM_KINDS = Set.of(GatewayApiKinds.GATEWAY, GatewayApiKinds.HTTP_ROUTE,
            GatewayApiKinds.GRPC_ROUTE, GatewayApiKinds.TLS_ROUTE, GatewayApiKinds.TCP_ROUTE, GatewayApiKinds.LISTENER_SET);
    /** The {@code to} kinds istiod honours, as {@code group/kind} (the core group is empty). */
    private static final Set<String> TO_KINDS = Set.of("/ConfigMap", "/Secret", "/Service",
            "gateway.networking.x-k8s.io/XBackend", "inference.networking.k8s.io/InferencePool");
    public static final ReferenceGrants NONE = new ReferenceGrants(Map.of(), Set.of());

    /** From kind and namespace to group/kind and namespace. */
    private record Pair(String fromKind, String fromNamespace, String toGroupKind, String toNamespace) {
    }

    /**
     * By pair: the names allowed. A name is kept as written and compared as istiod compares it:
     * {@code "*"} is a name, not a wildcard.
     */
    private final Map<Pair, Set<String>> allowedNames;
    /** The pairs a grant without a name covers: every object of the kind. */
    private final Set<Pair> allowedAll;

    private ReferenceGrants(Map<Pair, Set<String>> allowedNames, Set<Pair> allowedAll) {
        this.allowedNames = allowedNames;
        this.allowedAll = allowedAll;
    }

    /** Indexes the ReferenceGrant objects among {@code objects} (other kinds are ignored). */
    public static ReferenceGrants of(List<GatewayApiObject> objects) {
        Map<Pair, Set<String>> names = new HashMap<>();
        Set<Pair> all = new HashSet<>();
        for (GatewayApiObject grant : objects) {
            if (!grant.kind().equals(GatewayApiKinds.REFERENCE_GRANT)) {
                continue;
            }
            JsonObject spec = grant.spec();
            for (JsonObject from : objects(spec, "from")) {
                if (!GatewayApiKinds.GROUP.equals(string(from, "group")) || !FROM_KINDS.contains(string(from, "kind"))) {
                    continue;
                }
                for (JsonObject to : objects(spec, "to")) {
                    String toGroupKind = string(to, "group") + "/" + string(to, "kind");
                    if (!TO_KINDS.contains(toGroupKind)) {
                        continue;
                    }
                    Pair pair = new Pair(string(from, "kind"), string(from, "namespace"), toGroupKind, grant.namespace());
                    JsonElement name = to.get("name");
                    if (name == null || name.isJsonNull()) {
                        all.add(pair);
                    } else {
                        names.computeIfAbsent(pair, p -> new HashSet<>()).add(string(to, "name"));
                    }
                }
            }
        }
        names.replaceAll((pair, named) -> Set.copyOf(named));
        return new ReferenceGrants(Map.copyOf(names), Set.copyOf(all));
    }

    /**
     * Whether an object of {@code fromKind} (a Gateway API kind) in {@code fromNamespace} may refer to
     * {@code toName} of {@code toGroup}/{@code toKind} in {@code toNamespace} (istiod's BackendAllowed and
     * SecretAllowed). A reference within one namespace needs no grant.
     */
    public boolean allowed(String fromKind, String fromNamespace, String toGroup, String toKind, String toNamespace,
                           String toName) {
        if (fromNamespace.equals(toNamespace)) {
            return true;
        }
        Pair pair = new Pair(fromKind, fromNamespace, toGroup + "/" + toKind, toNamespace);
        return allowedAll.contains(pair) || allowedNames.getOrDefault(pair, Set.of()).contains(toName);
    }

    private static List<JsonObject> objects(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        if (e == null || !e.isJsonArray()) {
            return List.of();
        }
        return e.getAsJsonArray().asList().stream().filter(JsonElement::isJsonObject).map(JsonElement::getAsJsonObject)
                .toList();
    }

    private static String string(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }
}
