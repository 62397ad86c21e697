package io.meshpilot.testing;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager;
import io.envoyproxy.envoy.extensions.filters.network.http_connection_manager.v3.HttpFilter;
import io.meshpilot.networking.EnvoyTypes;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** The enforced rules of HTTP or network RBAC filters, for assertions on what a listener enforces. */
public final class RbacPolicies {
    public static final String HTTP_RBAC = "envoy.filters.http.rbac";

    private RbacPolicies() {
    }

    /** Every rule of the filters, {@code <action> <policy name>} -> the policy as compact JSON, in filter order. */
    public static Map<String, String> of(List<Any> filters) {
        Map<String, String> out = new LinkedHashMap<>();
        for (Any a : filters) {
            JsonObject rules;
            try {
                rules = JsonParser.parseString(JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY).print(a))
                        .getAsJsonObject().getAsJsonObject("rules");
            } catch (InvalidProtocolBufferException e) {
                throw new AssertionError(e);
            }
            if (rules == null) {
                continue;
            }
            String action = rules.has("action") ? rules.get("action").getAsString() : "ALLOW";
            for (Map.Entry<String, JsonElement> e : new TreeMap<>(rules.getAsJsonObject("policies").asMap()).entrySet()) {
                out.put(action + " " + e.getKey(), e.getValue().toString());
            }
        }
        return out;
    }

    /** The rules of a connection manager's RBAC filters. */
    public static Map<String, String> of(HttpConnectionManager hcm) {
        return of(hcm.getHttpFiltersList().stream().filter(f -> f.getName().equals(HTTP_RBAC))
                .map(HttpFilter::getTypedConfig).toList());
    }
}
