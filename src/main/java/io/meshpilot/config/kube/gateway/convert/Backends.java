package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.PortSelector;
import io.meshpilot.api.networking.v1alpha3.RouteDestination;
import io.meshpilot.config.kube.gateway.GatewayApiInputs;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.config.kube.gateway.ReferenceGrants;
import io.meshpilot.config.schema.Schemas;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * A route's {@code backendRefs} into Istio destinations (istiod's buildDestination,
 * buildHTTPDestination, buildGRPCDestination, buildTCPDestination in
 * pilot/pkg/config/kube/gateway/conversion.go): Services, ServiceEntry hosts
 * ({@code networking.istio.io/Hostname}), ServiceImports and, with the alpha API on, XBackends.
 * A backend that is missing, not granted or of an unsupported kind stays in the route as an
 * empty or unknown destination (its share of traffic fails, the others keep working) and is
 * reported; a backend without a port fails its whole rule.
 */
final class Backends {
    static final String XBACKEND_GROUP = "gateway.networking.x-k8s.io";
    static final String INFERENCE_GROUP = "inference.networking.k8s.io";

    private final GatewayApiInputs inputs;
    private final ReferenceGrants grants;

    Backends(GatewayApiInputs inputs, ReferenceGrants grants) {
        this.inputs = inputs;
        this.grants = grants;
    }

    /** A backendRef's weight: 1 when unset. */
    static int weight(JsonObject backendRef) {
        return JsonFields.optionalInteger(backendRef, "weight").orElse(1);
    }

    static int weightSum(List<JsonObject> backendRefs) {
        return backendRefs.stream().mapToInt(Backends::weight).sum();
    }

    /**
     * The destinations of an HTTPRoute or GRPCRoute rule: zero-weight backends dropped, a single
     * backend's weight left unset, per-backend header filters applied.
     */
    Converted<List<HTTPRouteDestination>> http(List<JsonObject> backendRefs, String routeKind, String namespace,
                                               boolean enforceGrants) {
        return weighted(backendRefs, routeKind, namespace, enforceGrants, (ref, dst, weight) -> {
            HTTPRouteDestination.Builder rd = HTTPRouteDestination.newBuilder().setDestination(dst).setWeight(weight);
            for (JsonObject filter : JsonFields.objects(ref, "filters")) {
                String type = JsonFields.string(filter, "type");
                if (!type.equals(HttpFilters.REQUEST_HEADER_MODIFIER) && !type.equals(HttpFilters.RESPONSE_HEADER_MODIFIER)) {
                    return Converted.failed(HttpFilters.unsupported(type));
                }
                ConfigError error = HttpRouteConversion.applyHeaders(rd.getHeadersBuilder(), filter, type);
                if (error != null) {
                    return Converted.failed(error);
                }
            }
            if (rd.getHeaders().equals(Headers.getDefaultInstance())) {
                rd.clearHeaders();
            }
            return Converted.ok(rd.build());
        });
    }

    /** The destinations of a TCPRoute or TLSRoute rule, weighted as {@link #http}. */
    Converted<List<RouteDestination>> tcp(List<JsonObject> backendRefs, String routeKind, String namespace,
                                          boolean enforceGrants) {
        return weighted(backendRefs, routeKind, namespace, enforceGrants, (ref, dst, weight) ->
                Converted.ok(RouteDestination.newBuilder().setDestination(dst).setWeight(weight).build()));
    }

    /** Builds one route destination of a backend; a hard error fails the rule. */
    @FunctionalInterface
    private interface DestinationBuilder<T> {
        Converted<T> build(JsonObject backendRef, Destination destination, int weight);
    }

    /**
     * istiod's weighting: backends of weight 0 are left out, a single remaining backend gets no
     * weight; a backend that cannot be used stays (reported), any other error fails the rule.
     */
    private <T> Converted<List<T>> weighted(List<JsonObject> backendRefs, String routeKind, String namespace,
                                            boolean enforceGrants, DestinationBuilder<T> builder) {
        List<JsonObject> used = backendRefs.stream().filter(b -> weight(b) != 0).toList();
        ConfigError invalidBackend = null;
        List<T> out = new ArrayList<>();
        for (JsonObject ref : used) {
            Converted<Destination> dst = destination(ref, routeKind, namespace, enforceGrants);
            if (dst.error() != null) {
                if (dst.hardError() || !RouteReasons.invalidBackend(dst.error())) {
                    return Converted.failed(dst.error());
                }
                invalidBackend = dst.error();
            }
            Converted<T> built = builder.build(ref, dst.value(), used.size() == 1 ? 0 : weight(ref));
            if (built.hardError()) {
                return Converted.failed(built.error());
            }
            out.add(built.value());
        }
        return new Converted<>(List.copyOf(out), invalidBackend);
    }

    /**
     * One backendRef (or a mirror filter's backendRef) as a destination. {@code enforceGrants}
     * is false for mesh routes: istiod checks ReferenceGrants only for routes on Gateways.
     */
    Converted<Destination> destination(JsonObject ref, String routeKind, String namespace, boolean enforceGrants) {
        String group = JsonFields.optionalString(ref, "group").orElse("");
        String kind = JsonFields.optionalString(ref, "kind").orElse("Service");
        String name = JsonFields.string(ref, "name");
        Optional<String> refNamespace = JsonFields.optionalString(ref, "namespace");
        if (enforceGrants && refNamespace.isPresent() && !refNamespace.get().equals(namespace)
                && !grants.allowed(routeKind, namespace, group, kind, refNamespace.get(), name)) {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.REF_NOT_PERMITTED,
                    "backendRef " + name + "/" + refNamespace.get() + " not accessible to a " + routeKind
                            + " in namespace \"" + namespace + "\" (missing a ReferenceGrant?)"));
        }
        String backendNamespace = refNamespace.orElse(namespace);
        String domain = inputs.settings().domainSuffix();
        String hostname;
        ConfigError invalidBackend = null;
        if (group.isEmpty() && kind.equals("Service")) {
            if (name.contains(".")) {
                return Converted.failed(new ConfigError(RouteReasons.INVALID_DESTINATION,
                        "service name invalid; the name of the Service must be used, not the hostname."));
            }
            hostname = name + "." + backendNamespace + ".svc." + domain;
            invalidBackend = notFoundUnlessServed(hostname, backendNamespace, hostname);
        } else if (group.equals(Schemas.NETWORKING) && kind.equals("Hostname")) {
            if (refNamespace.isPresent()) {
                return Converted.failed(new ConfigError(RouteReasons.INVALID_DESTINATION,
                        "namespace may not be set with Hostname type"));
            }
            hostname = name;
            invalidBackend = notFoundUnlessServed(hostname, backendNamespace, hostname);
        } else if (group.equals(inputs.settings().mcsApiGroup()) && kind.equals("ServiceImport")) {
            hostname = name + "." + backendNamespace + ".svc."
                    + (inputs.settings().mcsHosts() ? "clusterset.local" : domain);
            // istiod checks the Service of that name (not the ServiceImport) in either mode
            invalidBackend = notFoundUnlessServed(name + "." + backendNamespace + ".svc." + domain, backendNamespace,
                    hostname);
        } else if (group.equals(XBACKEND_GROUP) && kind.equals("XBackend")) {
            return xBackend(ref, name, backendNamespace);
        } else if (group.equals(INFERENCE_GROUP) && kind.equals("InferencePool")) {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.INVALID_KIND,
                    inputs.settings().inferenceExtension()
                            ? "InferencePool backends are not served by MeshPilot"
                            : "InferencePool is not enabled. To enable, set ENABLE_GATEWAY_API_INFERENCE_EXTENSION to true in istiod"));
        } else {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.INVALID_KIND,
                    "referencing unsupported backendRef: group \"" + JsonFields.string(ref, "group")
                            + "\" kind \"" + JsonFields.string(ref, "kind") + "\""));
        }
        Optional<Integer> port = JsonFields.optionalInteger(ref, "port");
        if (port.isEmpty()) {
            return Converted.failed(new ConfigError(RouteReasons.INVALID_DESTINATION, "port is required in backendRef"));
        }
        return new Converted<>(Destination.newBuilder().setHost(hostname)
                .setPort(PortSelector.newBuilder().setNumber(port.get())).build(), invalidBackend);
    }

    private ConfigError notFoundUnlessServed(String lookupHost, String namespace, String reportedHost) {
        return inputs.services().service(lookupHost, namespace).isPresent() ? null
                : new ConfigError(RouteReasons.BACKEND_NOT_FOUND, "backend(" + reportedHost + ") not found");
    }

    /** An XBackend of type ExternalHostname (alpha API): its host and its own port. */
    private Converted<Destination> xBackend(JsonObject ref, String name, String namespace) {
        if (!inputs.settings().alphaApis()) {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.INVALID_KIND,
                    "The Alpha Gateway API is not enabled, XBackend is invalid. To enable, set "
                            + "PILOT_ENABLE_ALPHA_GATEWAY_API to true in istiod."));
        }
        Optional<GatewayApiObject> backend = inputs.objects().stream()
                .filter(o -> o.kind().equals("XBackend") && o.namespace().equals(namespace) && o.name().equals(name))
                .findFirst();
        if (backend.isEmpty()) {
            return new Converted<>(Destination.getDefaultInstance(),
                    new ConfigError(RouteReasons.BACKEND_NOT_FOUND, "backend(" + name + ") not found"));
        }
        JsonObject spec = backend.get().spec();
        String type = JsonFields.string(spec, "type");
        Optional<JsonObject> external = JsonFields.optionalObject(spec, "externalHostname");
        if (!type.equals("ExternalHostname") || external.isEmpty()) {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.INVALID_KIND,
                    "backend(" + name + ") type: expected ExternalHostname, got " + type));
        }
        String hostname = JsonFields.string(external.get(), "hostname");
        int backendPort = JsonFields.optionalObject(spec, "port").flatMap(p -> JsonFields.optionalInteger(p, "port")).orElse(0);
        Optional<Integer> refPort = JsonFields.optionalInteger(ref, "port");
        if (refPort.isPresent() && refPort.get() != backendPort) {
            return new Converted<>(Destination.getDefaultInstance(), new ConfigError(RouteReasons.BACKEND_NOT_FOUND,
                    "backend(" + name + ") does not expose port " + refPort.get() + ", expected " + backendPort));
        }
        ConfigError invalid = notFoundUnlessServed(hostname, namespace, hostname);
        return new Converted<>(Destination.newBuilder().setHost(hostname)
                .setPort(PortSelector.newBuilder().setNumber(backendPort)).build(), invalid);
    }
}
