package io.meshpilot.config.schema;

import io.meshpilot.config.GroupVersionKind;
import com.google.protobuf.Message;
import io.meshpilot.api.extensions.v1alpha1.WasmPlugin;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter;
import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.networking.v1alpha3.WorkloadGroup;
import io.meshpilot.api.networking.v1beta1.ProxyConfig;
import io.meshpilot.api.security.v1beta1.AuthorizationPolicy;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.security.v1beta1.RequestAuthentication;
import io.meshpilot.api.telemetry.v1alpha1.Telemetry;
import io.meshpilot.config.validation.Validator;
import io.meshpilot.config.validation.networking.DestinationRuleValidator;
import io.meshpilot.config.validation.networking.EnvoyFilterValidator;
import io.meshpilot.config.validation.networking.GatewayValidator;
import io.meshpilot.config.validation.networking.ProxyConfigValidator;
import io.meshpilot.config.validation.networking.ServiceEntryValidator;
import io.meshpilot.config.validation.networking.SidecarValidator;
import io.meshpilot.config.validation.networking.VirtualServiceValidator;
import io.meshpilot.config.validation.networking.WorkloadEntryValidator;
import io.meshpilot.config.validation.networking.WorkloadGroupValidator;
import io.meshpilot.config.validation.policy.AuthorizationPolicyValidator;
import io.meshpilot.config.validation.policy.PeerAuthenticationValidator;
import io.meshpilot.config.validation.policy.RequestAuthenticationValidator;
import io.meshpilot.config.validation.policy.TelemetryValidator;
import io.meshpilot.config.validation.policy.WasmPluginValidator;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The Pilot config kinds (istiod's collections.Pilot): group, served versions with the
 * preferred first, plural, spec type and validation. Every served version of a kind maps to
 * the one spec message.
 */
public final class Schemas {
    public static final String NETWORKING = "networking.istio.io";
    public static final String SECURITY = "security.istio.io";
    public static final String TELEMETRY = "telemetry.istio.io";
    public static final String EXTENSIONS = "extensions.istio.io";

    private static final List<String> NETWORKING_VERSIONS = List.of("v1", "v1beta1", "v1alpha3");
    private static final List<String> SECURITY_VERSIONS = List.of("v1", "v1beta1");

    /** All Pilot kinds, in istiod's order. */
    public static final Schemas PILOT = new Schemas(List.of(
            schema(NETWORKING, "VirtualService", "virtualservices", NETWORKING_VERSIONS,
                    VirtualService.getDefaultInstance(), new VirtualServiceValidator()),
            schema(NETWORKING, "DestinationRule", "destinationrules", NETWORKING_VERSIONS,
                    DestinationRule.getDefaultInstance(), new DestinationRuleValidator()),
            schema(NETWORKING, "Gateway", "gateways", NETWORKING_VERSIONS, Gateway.getDefaultInstance(),
                    new GatewayValidator()),
            schema(NETWORKING, "ServiceEntry", "serviceentries", NETWORKING_VERSIONS,
                    ServiceEntry.getDefaultInstance(), new ServiceEntryValidator()),
            schema(NETWORKING, "Sidecar", "sidecars", NETWORKING_VERSIONS, Sidecar.getDefaultInstance(),
                    new SidecarValidator()),
            schema(NETWORKING, "WorkloadEntry", "workloadentries", NETWORKING_VERSIONS,
                    WorkloadEntry.getDefaultInstance(), new WorkloadEntryValidator()),
            schema(NETWORKING, "WorkloadGroup", "workloadgroups", NETWORKING_VERSIONS,
                    WorkloadGroup.getDefaultInstance(), new WorkloadGroupValidator()),
            schema(NETWORKING, "EnvoyFilter", "envoyfilters", List.of("v1alpha3"), EnvoyFilter.getDefaultInstance(),
                    new EnvoyFilterValidator()),
            schema(NETWORKING, "ProxyConfig", "proxyconfigs", List.of("v1beta1"), ProxyConfig.getDefaultInstance(),
                    new ProxyConfigValidator()),
            schema(SECURITY, "PeerAuthentication", "peerauthentications", SECURITY_VERSIONS,
                    PeerAuthentication.getDefaultInstance(), new PeerAuthenticationValidator()),
            schema(SECURITY, "RequestAuthentication", "requestauthentications", SECURITY_VERSIONS,
                    RequestAuthentication.getDefaultInstance(), new RequestAuthenticationValidator()),
            schema(SECURITY, "AuthorizationPolicy", "authorizationpolicies", SECURITY_VERSIONS,
                    AuthorizationPolicy.getDefaultInstance(), new AuthorizationPolicyValidator()),
            schema(TELEMETRY, "Telemetry", "telemetries", List.of("v1", "v1alpha1"), Telemetry.getDefaultInstance(),
                    new TelemetryValidator()),
            schema(EXTENSIONS, "WasmPlugin", "wasmplugins", List.of("v1alpha1"), WasmPlugin.getDefaultInstance(),
                    new WasmPluginValidator())));

    private final Map<String, Schema> byKind = new LinkedHashMap<>();

    public Schemas(List<Schema> schemas) {
        schemas.forEach(s -> byKind.put(s.kind(), s));
    }

    private static Schema schema(String group, String kind, String plural, List<String> versions, Message spec,
                                 Validator validator) {
        return new Schema(group, kind, plural, versions, false, spec, validator);
    }

    public Collection<Schema> all() {
        return byKind.values();
    }

    public Optional<Schema> forKind(String kind) {
        return Optional.ofNullable(byKind.get(kind));
    }

    /** The schema serving this group/version/kind, if any. */
    public Optional<Schema> forGvk(GroupVersionKind gvk) {
        Schema s = byKind.get(gvk.kind());
        return s != null && s.group().equals(gvk.group()) && s.serves(gvk.version()) ? Optional.of(s) : Optional.empty();
    }

    /** By plural name (REST paths use it as Kubernetes does) or kind, case-insensitively. */
    public Optional<Schema> forName(String group, String name) {
        for (Schema s : byKind.values()) {
            if (s.group().equals(group) && (s.plural().equalsIgnoreCase(name) || s.kind().equalsIgnoreCase(name))) {
                return Optional.of(s);
            }
        }
        return Optional.empty();
    }
}
