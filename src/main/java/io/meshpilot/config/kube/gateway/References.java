package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/**
 * The Secrets and ConfigMaps Gateway API objects refer to, as {@code namespace/name}: TLS
 * {@code certificateRefs} and a Gateway's {@code tls.backend.clientCertificateRef} (Secrets unless
 * a kind says otherwise), {@code caCertificateRefs}
 * (ConfigMaps unless a kind says otherwise) and {@code parametersRef}s of kind ConfigMap,
 * wherever they sit in a spec, so that fields added by later API versions are covered. A
 * reference without a namespace is to the object's own; whether a cross-namespace one is
 * allowed is the conversion's question (ReferenceGrants).
 */
record References(Set<String> secrets, Set<String> configMaps) {
    References {
        secrets = Set.copyOf(secrets);
        configMaps = Set.copyOf(configMaps);
    }

    static References of(List<GatewayApiObject> objects) {
        Set<String> secrets = new TreeSet<>();
        Set<String> configMaps = new TreeSet<>();
        for (GatewayApiObject o : objects) {
            walk(o.spec(), o.namespace(), secrets, configMaps);
        }
        return new References(secrets, configMaps);
    }

    private static void walk(JsonElement e, String namespace, Set<String> secrets, Set<String> configMaps) {
        if (e.isJsonArray()) {
            e.getAsJsonArray().forEach(item -> walk(item, namespace, secrets, configMaps));
            return;
        }
        if (!e.isJsonObject()) {
            return;
        }
        for (var field : e.getAsJsonObject().entrySet()) {
            String defaultKind = switch (field.getKey()) {
                case "certificateRefs", "clientCertificateRef" -> "Secret";
                case "caCertificateRefs", "parametersRef" -> "ConfigMap";
                default -> null;
            };
            if (defaultKind == null) {
                walk(field.getValue(), namespace, secrets, configMaps);
                continue;
            }
            List<JsonElement> refs = field.getValue().isJsonArray() ? field.getValue().getAsJsonArray().asList()
                    : List.of(field.getValue());
            for (JsonElement ref : refs) {
                if (!ref.isJsonObject()) {
                    continue;
                }
                JsonObject r = ref.getAsJsonObject();
                String group = GatewayApiObject.string(r, "group");
                String kind = GatewayApiObject.string(r, "kind").isEmpty() ? defaultKind : GatewayApiObject.string(r, "kind");
                String name = GatewayApiObject.string(r, "name");
                String ns = GatewayApiObject.string(r, "namespace").isEmpty() ? namespace : GatewayApiObject.string(r, "namespace");
                if (!group.isEmpty() || name.isEmpty()) {
                    continue; // not a core object
                }
                if (kind.equals("Secret")) {
                    secrets.add(ns + "/" + name);
                } else if (kind.equals("ConfigMap")) {
                    configMaps.add(ns + "/" + name);
                }
            }
        }
    }
}
