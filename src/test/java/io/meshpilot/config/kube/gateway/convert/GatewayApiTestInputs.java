package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.Gson;
import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.GatewayServices;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Builds a conversion snapshot from Gateway API YAML as a user applies it, plus the namespaces,
 * Secrets, ConfigMaps and Services the objects refer to: the conversion's real input, without
 * an API server.
 */
final class GatewayApiTestInputs {
    private static final Gson GSON = new Gson();
    private final List<GatewayApiObject> objects = new ArrayList<>();
    private final Map<String, Map<String, String>> namespaces = new HashMap<>();
    private final Map<String, Map<String, byte[]>> secrets = new HashMap<>();
    private final Map<String, Map<String, String>> configMaps = new HashMap<>();
    private final List<GatewayServices.ServiceView> services = new ArrayList<>();
    private boolean ambientWaypoints;

    /** Every document of {@code yaml}; each object's namespace is added with no labels. */
    GatewayApiTestInputs yaml(String yaml) {
        for (Object doc : new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(yaml)) {
            if (doc == null) {
                continue;
            }
            GatewayApiObject o = GatewayApiObject.fromJson(GSON.toJsonTree(doc).getAsJsonObject());
            objects.add(o);
            if (!o.namespace().isEmpty()) {
                namespaces.putIfAbsent(o.namespace(), Map.of());
            }
        }
        return this;
    }

    GatewayApiTestInputs namespace(String name, Map<String, String> labels) {
        namespaces.put(name, labels);
        return this;
    }

    GatewayApiTestInputs secret(String namespace, String name, Map<String, String> data) {
        Map<String, byte[]> bytes = new HashMap<>();
        data.forEach((k, v) -> bytes.put(k, v.getBytes(StandardCharsets.UTF_8)));
        secrets.put(namespace + "/" + name, bytes);
        return this;
    }

    GatewayApiTestInputs configMap(String namespace, String name, Map<String, String> data) {
        configMaps.put(namespace + "/" + name, data);
        return this;
    }

    /** A Service with one instance per port, each with the given endpoint port (istiod's test fixtures use 8080). */
    GatewayApiTestInputs service(String hostname, String namespace, String type, List<Integer> ports,
                                 List<String> externalAddresses, Map<Integer, List<Integer>> endpointPorts) {
        services.add(new GatewayServices.ServiceView(hostname, namespace, Map.of(), type, ports, List.of("10.0.0.1"),
                externalAddresses, endpointPorts));
        return this;
    }

    /** PILOT_ENABLE_AMBIENT (with its default PILOT_ENABLE_AMBIENT_WAYPOINTS): the {@code istio-waypoint} class is ours. */
    GatewayApiTestInputs ambientWaypoints() {
        ambientWaypoints = true;
        return this;
    }

    GatewayApiInputs build() {
        List<GatewayServices.ServiceView> known = List.copyOf(services);
        GatewayServices registry = new GatewayServices() {
            @Override
            public Optional<ServiceView> service(String hostname, String namespace) {
                return known.stream().filter(s -> s.hostname().equals(hostname) && s.namespace().equals(namespace))
                        .findFirst();
            }

            @Override
            public List<String> namespacesOf(String hostname) {
                return known.stream().filter(s -> s.hostname().equals(hostname)).map(ServiceView::namespace).sorted()
                        .toList();
            }
        };
        GatewayApiInputs.Settings d = GatewayApiInputs.Settings.defaults("domain.suffix", "Kubernetes");
        return new GatewayApiInputs(objects, namespaces, registry, secrets, configMaps, new GatewayApiInputs.Settings(
                d.domainSuffix(), d.clusterId(), d.controllerName(), d.defaultGatewayClass(), d.manualDeployment(),
                d.multiNetworkGatewayApi(), d.alphaApis(), d.inferenceExtension(), d.mcsHosts(), d.mcsApiGroup(),
                ambientWaypoints));
    }

    static JsonObject json(String text) {
        return GSON.fromJson(text, JsonObject.class);
    }

    /** The condition of {@code type} among {@code holder}'s conditions as {@code status reason: message}. */
    static String condition(JsonObject holder, String type) {
        return JsonFields.objects(holder, "conditions").stream().filter(c -> JsonFields.string(c, "type").equals(type))
                .map(c -> JsonFields.string(c, "status") + " " + JsonFields.string(c, "reason") + ": "
                        + JsonFields.string(c, "message"))
                .findFirst().orElseThrow(() -> new AssertionError("no " + type + " in " + holder));
    }

    /** The status listener entry named {@code name}. */
    static JsonObject listener(JsonObject status, String name) {
        return JsonFields.objects(status, "listeners").stream().filter(l -> JsonFields.string(l, "name").equals(name))
                .findFirst().orElseThrow(() -> new AssertionError("no listener " + name + " in " + status));
    }
}
