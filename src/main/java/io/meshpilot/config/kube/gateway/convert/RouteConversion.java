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

/**
 * HTTPRoutes, GRPCRoutes, TCPRoutes and TLSRoutes into VirtualServices against the listeners
 * the Gateway conversion found, and BackendTLSPolicies into DestinationRules (istiod's route
 * collections and backend_policies.go). Skeleton: converts nothing yet.
 */
public final class RouteConversion {
    private RouteConversion() {
    }

    /**
     * @param statuses     each route's (and BackendTLSPolicy's) status
     * @param attachments  every route accepted by a listener, for the parents' attachedRoutes
     * @param problems     what could not be converted, by object
     */
    public record Output(List<Config> virtualServices, List<Config> destinationRules,
                         Map<ConfigKey, JsonObject> statuses, List<RouteAttachment> attachments,
                         Map<ConfigKey, List<String>> problems) {
    }

    public static Output convert(GatewayApiInputs inputs, ReferenceGrants grants, RouteParents parents) {
        return new Output(List.of(), List.of(), Map.of(), List.of(), Map.of());
    }
}
