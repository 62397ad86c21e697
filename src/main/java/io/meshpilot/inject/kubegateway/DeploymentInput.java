package io.meshpilot.inject.kubegateway;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the {@code kube-gateway} and {@code waypoint} templates read for one Gateway (istiod's
 * TemplateInput, built in deploymentcontroller.go configureIstioGateway and setLabelOverrides):
 * its names, the Service's ports and type, and the labels and annotations its objects carry.
 *
 * @param uid                       the Gateway's uid, for the owner references
 * @param deploymentName            annotation {@code gateway.istio.io/name-override}, else {@code <gateway>-<class>}
 *                                  ({@code <gateway>} for classes without the suffix)
 * @param serviceAccount            annotation {@code gateway.istio.io/service-account}, else as the deployment name
 * @param serviceType               annotation {@code networking.istio.io/service-type}, else the class's default
 * @param loadBalancerIp            the first of {@code spec.addresses} for a LoadBalancer Service, else ""
 * @param gatewayAnnotations        the Gateway's own annotations (the template's {@code annotation .ObjectMeta})
 * @param infrastructureLabels      {@code spec.infrastructure.labels}, else (when copying) the Gateway's labels
 * @param infrastructureAnnotations {@code spec.infrastructure.annotations}, else (when copying) the Gateway's annotations
 * @param clusterId                 this istiod's cluster (ISTIO_META_CLUSTER_ID unless the values name one)
 * @param kubeVersion               the API server's version as 1MM (128 for 1.28): ServiceAccounts get owner references from 128
 * @param revision                  this istiod's revision, "" for default
 * @param deploymentClass           what the Gateway's class deploys
 */
public record DeploymentInput(String namespace, String name, String uid, String gatewayClass, String deploymentName,
                              String serviceAccount, List<ServicePorts.Port> ports, String serviceType, String loadBalancerIp,
                              Map<String, String> gatewayAnnotations, Map<String, String> infrastructureLabels,
                              Map<String, String> infrastructureAnnotations, String clusterId, int kubeVersion,
                              String revision, DeploymentClass deploymentClass) {
    static final String NAME_OVERRIDE = "gateway.istio.io/name-override";
    static final String SERVICE_ACCOUNT = "gateway.istio.io/service-account";
    static final String SERVICE_TYPE = "networking.istio.io/service-type";
    /** Infrastructure keys of the Gateway API's own prefix are dropped (istiod's translateInfraMeta). */
    private static final String RESERVED_PREFIX = "gateway.networking.k8s.io/";
    static final String DATAPLANE_MODE_LABEL = "istio.io/dataplane-mode";
    static final String NETWORK_LABEL = "topology.istio.io/network";

    public DeploymentInput {
        ports = List.copyOf(ports);
        gatewayAnnotations = Map.copyOf(gatewayAnnotations);
        infrastructureLabels = Map.copyOf(infrastructureLabels);
        infrastructureAnnotations = Map.copyOf(infrastructureAnnotations);
    }

    /**
     * What the controller knows besides the Gateway.
     *
     * @param manualDeployment ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT: when false every Gateway is deployed, addresses or not
     * @param ambientWaypoints PILOT_ENABLE_AMBIENT with PILOT_ENABLE_AMBIENT_WAYPOINTS: waypoints are deployed, and
     *                         other gateways' objects are labelled out of ambient
     */
    public record Settings(String clusterId, int kubeVersion, String revision, boolean copyLabelsAnnotations,
                           boolean quicListeners, boolean manualDeployment, boolean ambientWaypoints) {
    }

    /**
     * The input for {@code gateway} (the whole object as JSON) of a class that deploys
     * {@code deploymentClass}, and the listeners of the ListenerSets its {@code allowedListeners}
     * admits, whose ports follow the Gateway's own.
     *
     * @param valuesNetwork the injector values' {@code global.network}: a waypoint's network unless its labels name one
     */
    public static DeploymentInput of(JsonObject gateway, List<JsonObject> listenerSetListeners, Settings settings,
                                     DeploymentClass deploymentClass, String valuesNetwork) {
        JsonObject meta = object(gateway, "metadata");
        JsonObject spec = object(gateway, "spec");
        String name = string(meta, "name");
        String gatewayClass = string(spec, "gatewayClassName");
        Map<String, String> labels = stringMap(object(meta, "labels"));
        Map<String, String> annotations = stringMap(object(meta, "annotations"));
        String defaultName = deploymentClass.disableNameSuffix() ? name : name + "-" + gatewayClass;
        String serviceType = annotations.getOrDefault(SERVICE_TYPE, deploymentClass.defaultServiceType());
        List<JsonObject> listeners = new ArrayList<>();
        if (spec.get("listeners") instanceof JsonArray list) {
            list.forEach(l -> listeners.add(l.isJsonObject() ? l.getAsJsonObject() : new JsonObject()));
        }
        listeners.addAll(listenerSetListeners);
        String loadBalancerIp = "";
        if (spec.get("addresses") instanceof JsonArray addresses && !addresses.isEmpty()
                && serviceType.equals("LoadBalancer") && addresses.get(0).isJsonObject()) {
            loadBalancerIp = string(addresses.get(0).getAsJsonObject(), "value");
        }
        JsonObject infrastructure = object(spec, "infrastructure");
        Map<String, String> infrastructureLabels = new LinkedHashMap<>(infrastructure(infrastructure, "labels", labels,
                settings.copyLabelsAnnotations()));
        labelOverrides(gatewayClass, labels, infrastructureLabels, settings.ambientWaypoints(), valuesNetwork);
        return new DeploymentInput(string(meta, "namespace"), name, string(meta, "uid"), gatewayClass,
                nonEmpty(annotations.get(NAME_OVERRIDE), defaultName), nonEmpty(annotations.get(SERVICE_ACCOUNT), defaultName),
                ServicePorts.of(listeners, settings.quicListeners()), serviceType, loadBalancerIp, annotations,
                infrastructureLabels,
                infrastructure(infrastructure, "annotations", annotations, settings.copyLabelsAnnotations()),
                settings.clusterId(), settings.kubeVersion(), settings.revision(), deploymentClass);
    }

    /**
     * istiod's setLabelOverrides, which goes by the class's name: with ambient waypoints on, the
     * objects of a gateway that is not a waypoint (or east-west gateway) are kept out of ambient
     * ({@code istio.io/dataplane-mode: none}) unless the Gateway says otherwise; a waypoint takes
     * the values' network unless its own labels name one.
     */
    private static void labelOverrides(String gatewayClass, Map<String, String> gatewayLabels,
                                       Map<String, String> infrastructureLabels, boolean ambientWaypoints,
                                       String valuesNetwork) {
        boolean waypoint = gatewayClass.contains("waypoint");
        boolean eastWest = gatewayClass.contains("east-west");
        boolean hasAmbientLabel = gatewayLabels.containsKey(DATAPLANE_MODE_LABEL)
                || infrastructureLabels.containsKey(DATAPLANE_MODE_LABEL);
        if (ambientWaypoints && !waypoint && !eastWest && !hasAmbientLabel) {
            infrastructureLabels.put(DATAPLANE_MODE_LABEL, "none");
        }
        if (!gatewayLabels.containsKey(NETWORK_LABEL) && !valuesNetwork.isEmpty() && (waypoint || eastWest)) {
            infrastructureLabels.put(NETWORK_LABEL, valuesNetwork);
        }
    }

    /** istiod's extractInfrastructureMetadata: the infrastructure's map when given, else a copy of the Gateway's own. */
    private static Map<String, String> infrastructure(JsonObject infrastructure, String field, Map<String, String> own,
                                                      boolean copy) {
        if (infrastructure.get(field) instanceof JsonObject given) {
            Map<String, String> out = new LinkedHashMap<>();
            stringMap(given).forEach((k, v) -> {
                if (!k.startsWith(RESERVED_PREFIX)) {
                    out.put(k, v);
                }
            });
            return out;
        }
        return copy ? own : Map.of();
    }

    static JsonObject object(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonObject() ? e.getAsJsonObject() : new JsonObject();
    }

    static String string(JsonObject parent, String field) {
        JsonElement e = parent.get(field);
        return e != null && e.isJsonPrimitive() ? e.getAsString() : "";
    }

    static Map<String, String> stringMap(JsonObject o) {
        Map<String, String> m = new LinkedHashMap<>();
        o.entrySet().forEach(e -> {
            if (e.getValue().isJsonPrimitive()) {
                m.put(e.getKey(), e.getValue().getAsString());
            }
        });
        return m;
    }

    private static String nonEmpty(String value, String dflt) {
        return value == null || value.isEmpty() ? dflt : value;
    }
}
