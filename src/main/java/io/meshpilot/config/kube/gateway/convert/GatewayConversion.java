package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.kube.gateway.RouteAttachment;
import io.meshpilot.config.kube.gateway.RouteParents;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

/**
 * Gateways, ListenerSets and GatewayClasses into Istio Gateways and the listeners routes may
 * attach to (istiod's GatewayCollection, ListenerSetCollection, GatewayClassesCollection).
 * Skeleton: converts nothing yet.
 */
public final class GatewayConversion {
    private GatewayConversion() {
    }

    /**
     * @param gateways  Istio Gateways
     * @param parents   the listeners routes may attach to
     * @param statuses  the Gateway, ListenerSet and GatewayClass statuses once the routes attached to each
     *                  listener are known
     * @param problems  what could not be converted, by object
     */
    public record Output(List<Config> gateways, RouteParents parents,
                         Function<List<RouteAttachment>, Map<ConfigKey, JsonObject>> statuses,
                         Map<ConfigKey, List<String>> problems) {
        public Map<ConfigKey, JsonObject> statuses(List<RouteAttachment> attachments) {
            return statuses.apply(attachments);
        }
    }

    public static Output convert(GatewayApiInputs inputs, ReferenceGrants grants) {
        return new Output(List.of(), RouteParents.NONE, attachments -> Map.of(), Map.of());
    }
}
