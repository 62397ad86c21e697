package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Which Services' workloads serve a Gateway and as which service account (istiod's
 * extractGatewayServices, IsManaged, GetDefaultName): a managed Gateway (no address, or one IP
 * address) is deployed by the deployment controller as {@code <gateway>-<class>} (or the
 * {@code gateway.istio.io/name-override} annotation); a manual one names its Services by
 * Hostname addresses and any service account of the namespace may serve it.
 *
 * @param services       service FQDNs, the {@code internal.istio.io/gateway-service} annotation
 * @param serviceAccount the workloads' service account; empty for a manual Gateway
 * @param error          a soft error (addresses that are not Hostnames, a deprecated annotation); null when none
 */
public record GatewayServiceBinding(List<String> services, String serviceAccount, ConfigError error) {
    static final String NAME_OVERRIDE = "gateway.istio.io/name-override";
    static final String SERVICE_ACCOUNT = "gateway.istio.io/service-account";
    static final String SERVICE_TYPE = "networking.istio.io/service-type";
    private static final String HOSTNAME = "Hostname";

    public GatewayServiceBinding {
        services = List.copyOf(services);
    }

    /** The binding of {@code gateway} of a class with {@code info}. */
    public static GatewayServiceBinding of(GatewayApiObject gateway, ClassInfos.ClassInfo info, String domainSuffix,
                                           boolean manualDeployment) {
        JsonObject spec = gateway.spec();
        if (isManaged(spec, manualDeployment)) {
            String defaultName = defaultName(gateway, info);
            String name = annotationOrDefault(gateway, NAME_OVERRIDE, defaultName);
            return new GatewayServiceBinding(List.of(name + "." + gateway.namespace() + ".svc." + domainSuffix),
                    annotationOrDefault(gateway, SERVICE_ACCOUNT, defaultName), null);
        }
        List<String> services = new ArrayList<>();
        List<String> skipped = new ArrayList<>();
        for (JsonObject address : JsonFields.objects(spec, "addresses")) {
            String value = JsonFields.string(address, "value");
            String type = JsonFields.optionalString(address, "type").orElse(HOSTNAME);
            if (!type.equals(HOSTNAME)) {
                skipped.add(value);
                continue;
            }
            services.add(value.contains(".") ? value : value + "." + gateway.namespace() + ".svc." + domainSuffix);
        }
        if (!skipped.isEmpty()) {
            return new GatewayServiceBinding(services, "", new ConfigError("UnsupportedAddress",
                    "only Hostname is supported, ignoring [" + String.join(" ", skipped) + "]"));
        }
        if (gateway.annotations().containsKey(SERVICE_TYPE)) {
            return new GatewayServiceBinding(services, "", new ConfigError("DeprecatedField",
                    "annotation " + SERVICE_TYPE + " is deprecated, use Spec.Infrastructure.Routeability"));
        }
        return new GatewayServiceBinding(services, "", null);
    }

    /** istiod's model.GetOrDefault: an empty annotation is as good as none. */
    private static String annotationOrDefault(GatewayApiObject gateway, String key, String defaultValue) {
        String value = gateway.annotations().get(key);
        return value == null || value.isEmpty() ? defaultValue : value;
    }

    /**
     * istiod's IsManaged: deployed by the deployment controller unless the Gateway names more than one
     * address or one that is not an IP (always managed without ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT).
     */
    public static boolean isManaged(JsonObject gatewaySpec, boolean manualDeployment) {
        List<JsonObject> addresses = JsonFields.objects(gatewaySpec, "addresses");
        if (!manualDeployment || addresses.isEmpty()) {
            return true;
        }
        if (addresses.size() > 1) {
            return false;
        }
        return JsonFields.optionalString(addresses.get(0), "type").map("IPAddress"::equals).orElse(true);
    }

    /** {@code <gateway>-<class>}, or the Gateway's own name for classes without the suffix. */
    public static String defaultName(GatewayApiObject gateway, ClassInfos.ClassInfo info) {
        return info.disableNameSuffix() ? gateway.name()
                : gateway.name() + "-" + JsonFields.string(gateway.spec(), "gatewayClassName");
    }
}
