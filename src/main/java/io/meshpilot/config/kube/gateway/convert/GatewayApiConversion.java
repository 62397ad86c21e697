package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * istiod's Gateway API conversion (pilot/pkg/config/kube/gateway) as one pure function of a
 * snapshot: Gateways, ListenerSets and GatewayClasses first (the Istio Gateways, and the
 * listeners routes may attach to), then the routes against those listeners (VirtualServices
 * and, from BackendTLSPolicies, DestinationRules), then the status of every object, with the
 * routes attached to each listener counted.
 */
public final class GatewayApiConversion {
    private GatewayApiConversion() {
    }

    /**
     * The Istio config to serve and the status to write.
     *
     * @param gateways          Istio Gateways (networking.istio.io), one per Gateway listener
     * @param virtualServices   from HTTP, GRPC, TCP and TLS routes
     * @param destinationRules  from BackendTLSPolicies
     * @param statuses          the desired {@code status} stanza of every object, by {@code kind/namespace/name}
     * @param problems          what could not be converted, by object, for config-errors and push status
     */
    public record Result(List<Config> gateways, List<Config> virtualServices, List<Config> destinationRules,
                         Map<ConfigKey, JsonObject> statuses, Map<ConfigKey, List<String>> problems) {
        public Result {
            gateways = List.copyOf(gateways);
            virtualServices = List.copyOf(virtualServices);
            destinationRules = List.copyOf(destinationRules);
            Map<ConfigKey, JsonObject> copied = new TreeMap<>();
            statuses.forEach((k, v) -> copied.put(k, v.deepCopy()));
            statuses = Collections.unmodifiableMap(copied);
            problems = Map.copyOf(problems);
        }

        /** Every converted object: gateways, then virtual services, then destination rules. */
        public List<Config> all() {
            return Stream.of(gateways, virtualServices, destinationRules).flatMap(List::stream).toList();
        }
    }

    public static Result convert(GatewayApiInputs inputs) {
        ReferenceGrants grants = ReferenceGrants.of(inputs.objects());
        GatewayConversion.Output gateways = GatewayConversion.convert(inputs, grants);
        RouteConversion.Output routes = RouteConversion.convert(inputs, grants, gateways.parents());
        Map<ConfigKey, JsonObject> statuses = new TreeMap<>(routes.statuses());
        statuses.putAll(gateways.statuses(routes.attachments()));
        Map<ConfigKey, List<String>> problems = new TreeMap<>(routes.problems());
        gateways.problems().forEach((k, v) -> problems.merge(k, v,
                (a, b) -> Stream.concat(a.stream(), b.stream()).toList()));
        return new Result(gateways.gateways(), routes.virtualServices(), routes.destinationRules(), statuses, problems);
    }
}
