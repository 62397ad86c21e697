package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.ConversionResult;
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

    public static ConversionResult convert(GatewayApiInputs inputs) {
        ReferenceGrants grants = ReferenceGrants.of(inputs.objects());
        GatewayConversion.Output gateways = GatewayConversion.convert(inputs, grants);
        RouteConversion.Output routes = RouteConversion.convert(inputs, grants, gateways.parents());
        Map<ConfigKey, JsonObject> statuses = new TreeMap<>(routes.statuses());
        statuses.putAll(gateways.statuses(routes.attachments()));
        Map<ConfigKey, List<String>> problems = new TreeMap<>(routes.problems());
        gateways.problems().forEach((k, v) -> problems.merge(k, v,
                (a, b) -> Stream.concat(a.stream(), b.stream()).toList()));
        return new ConversionResult(gateways.gateways(), routes.virtualServices(), routes.destinationRules(), statuses, problems,
                gateways.services());
    }
}
