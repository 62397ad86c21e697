package io.meshpilot.config.kube.gateway;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Everything one Gateway API conversion reads, as an immutable snapshot: the Gateway API objects
 * (already filtered by discoverySelectors and revision), the namespaces' labels (for
 * {@code allowedRoutes.namespaces.selector}), the services, and the Secrets and ConfigMaps that
 * certificate references name.
 *
 * @param objects         every Gateway API object, any kind of {@link GatewayApiKinds}
 * @param namespaceLabels by namespace name
 * @param secrets         Secret data by {@code namespace/name}: read only to check references, never logged
 * @param configMaps      ConfigMap data by {@code namespace/name}
 */
public record GatewayApiInputs(List<GatewayApiObject> objects, Map<String, Map<String, String>> namespaceLabels,
                               GatewayServices services, Map<String, Map<String, byte[]>> secrets,
                               Map<String, Map<String, String>> configMaps, Settings settings) {

    public GatewayApiInputs {
        objects = List.copyOf(objects);
        namespaceLabels = Map.copyOf(namespaceLabels);
        secrets = Map.copyOf(secrets);
        configMaps = Map.copyOf(configMaps);
    }

    /** The objects of {@code kind}, in the order given. */
    public List<GatewayApiObject> ofKind(String kind) {
        return objects.stream().filter(o -> o.kind().equals(kind)).toList();
    }

    public Optional<Map<String, byte[]>> secret(String namespace, String name) {
        return Optional.ofNullable(secrets.get(namespace + "/" + name));
    }

    public Optional<Map<String, String>> configMap(String namespace, String name) {
        return Optional.ofNullable(configMaps.get(namespace + "/" + name));
    }

    /**
     * The settings istiod's conversion reads (pilot/pkg/features; names in docs/CONFIGURATION.md).
     *
     * @param domainSuffix              the cluster's DNS suffix (backend hostnames)
     * @param clusterId                 the config cluster
     * @param controllerName            PILOT_GATEWAY_API_CONTROLLER_NAME
     * @param defaultGatewayClass       PILOT_GATEWAY_API_DEFAULT_GATEWAYCLASS_NAME
     * @param manualDeployment          ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT
     * @param multiNetworkGatewayApi    PILOT_MULTI_NETWORK_DISCOVER_GATEWAY_API (the {@code istio-remote} class)
     * @param alphaApis                 PILOT_ENABLE_ALPHA_GATEWAY_API
     * @param inferenceExtension        ENABLE_GATEWAY_API_INFERENCE_EXTENSION
     * @param mcsHosts                  ENABLE_MCS_HOST
     * @param mcsApiGroup               MCS_API_GROUP
     * @param ambientWaypoints          PILOT_ENABLE_AMBIENT and PILOT_ENABLE_AMBIENT_WAYPOINTS: the {@code istio-waypoint}
     *                                  class
     */
    public record Settings(String domainSuffix, String clusterId, String controllerName, String defaultGatewayClass,
                           boolean manualDeployment, boolean multiNetworkGatewayApi, boolean alphaApis,
                           boolean inferenceExtension, boolean mcsHosts, String mcsApiGroup,
                           boolean ambientWaypoints) {
        /** istiod's defaults for {@code domainSuffix} and {@code clusterId}. */
        public static Settings defaults(String domainSuffix, String clusterId) {
            return new Settings(domainSuffix, clusterId, GatewayApiKinds.ISTIO_CONTROLLER, "istio", true, true,
                    false, false, false, "multicluster.x-k8s.io", false);
        }
    }
}
