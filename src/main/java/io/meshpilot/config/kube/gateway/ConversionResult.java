package io.meshpilot.config.kube.gateway;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.GeneratedConfigAnnotations;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What one Gateway API conversion gives: the Istio config to serve and the status to write.
 *
 * @param gateways          Istio Gateways (networking.istio.io), one per Gateway listener
 * @param virtualServices   from HTTP, GRPC, TCP and TLS routes
 * @param destinationRules  from BackendTLSPolicies
 * @param statuses          the desired {@code status} stanza of every object, by {@code kind/namespace/name}
 * @param problems          what could not be converted, by object, for config-errors and push status
 * @param gatewayServices   the Services (hostnames) the Gateways bind to, waypoints' included: a change of
 *                          their endpoints or addresses changes a status
 */
public record ConversionResult(List<Config> gateways, List<Config> virtualServices, List<Config> destinationRules,
                               Map<ConfigKey, JsonObject> statuses, Map<ConfigKey, List<String>> problems,
                               Set<String> gatewayServices) {
    /** A result whose Gateways' Services are those the Istio Gateways name. */
    public ConversionResult(List<Config> gateways, List<Config> virtualServices, List<Config> destinationRules,
                            Map<ConfigKey, JsonObject> statuses, Map<ConfigKey, List<String>> problems) {
        this(gateways, virtualServices, destinationRules, statuses, problems, servicesOf(gateways));
    }

    public ConversionResult {
        gateways = List.copyOf(gateways);
        virtualServices = List.copyOf(virtualServices);
        destinationRules = List.copyOf(destinationRules);
        Map<ConfigKey, JsonObject> copied = new TreeMap<>();
        statuses.forEach((k, v) -> copied.put(k, v.deepCopy()));
        statuses = Collections.unmodifiableMap(copied);
        problems = Map.copyOf(problems);
        gatewayServices = Set.copyOf(gatewayServices);
    }

    private static Set<String> servicesOf(List<Config> gateways) {
        Set<String> hosts = new HashSet<>();
        for (Config c : gateways) {
            String services = c.annotations().get(GeneratedConfigAnnotations.GATEWAY_SERVICE);
            if (services != null && !services.isEmpty()) {
                hosts.addAll(List.of(services.split(",")));
            }
        }
        return hosts;
    }

    /** Every converted object: gateways, then virtual services, then destination rules. */
    public List<Config> all() {
        return Stream.of(gateways, virtualServices, destinationRules).flatMap(List::stream).toList();
    }
}
