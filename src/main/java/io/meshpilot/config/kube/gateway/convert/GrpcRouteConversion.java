package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import io.meshpilot.api.networking.v1alpha3.HTTPDirectResponse;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPMirrorPolicy;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One GRPCRoute rule with at most one match into one Istio HTTP route (istiod's
 * convertGRPCRoute): the service/method match as a path match on {@code /Service/Method},
 * header matches, header and mirror filters, weighted backends.
 */
final class GrpcRouteConversion {
    private final Backends backends;

    GrpcRouteConversion(Backends backends) {
        this.backends = backends;
    }

    Converted<HTTPRoute> convert(GatewayApiObject route, JsonObject rule, Optional<JsonObject> match, int index,
                                 boolean enforceGrants) {
        HTTPRoute.Builder out = HTTPRoute.newBuilder().setName(HttpRouteConversion.ruleName(route, rule, index));
        if (match.isPresent()) {
            HTTPMatchRequest.Builder m = HTTPMatchRequest.newBuilder();
            Optional<JsonObject> method = JsonFields.optionalObject(match.get(), "method");
            if (method.isPresent()) {
                Converted<StringMatch> uri = methodMatch(method.get());
                if (uri.hardError()) {
                    return Converted.failed(uri.error());
                }
                m.setUri(uri.value());
            }
            Converted<Map<String, StringMatch>> headers =
                    HttpRouteConversion.stringMatches(JsonFields.objects(match.get(), "headers"), "HeaderMatch");
            if (headers.hardError()) {
                return Converted.failed(headers.error());
            }
            out.addMatch(m.putAllHeaders(headers.value()));
        }
        for (JsonObject filter : JsonFields.objects(rule, "filters")) {
            String type = JsonFields.string(filter, "type");
            switch (type) {
                case HttpFilters.REQUEST_HEADER_MODIFIER, HttpFilters.RESPONSE_HEADER_MODIFIER -> {
                    ConfigError error = HttpRouteConversion.applyHeaders(out.getHeadersBuilder(), filter, type);
                    if (error != null) {
                        return Converted.failed(error);
                    }
                }
                case HttpFilters.REQUEST_MIRROR -> {
                    Optional<JsonObject> f = JsonFields.optionalObject(filter, "requestMirror");
                    if (f.isPresent()) {
                        // unlike HTTPRoute, a mirror that cannot be built fails the rule (istiod)
                        Converted<HTTPMirrorPolicy> mirror = HttpFilters.mirror(f.get(), backends,
                                GatewayApiKinds.GRPC_ROUTE, route.namespace(), enforceGrants);
                        if (mirror.hardError()) {
                            return Converted.failed(mirror.error());
                        }
                        out.addMirrors(mirror.value());
                    }
                }
                default -> {
                    return Converted.failed(HttpFilters.unsupported(type));
                }
            }
        }
        if (out.hasHeaders() && out.getHeaders().equals(Headers.getDefaultInstance())) {
            out.clearHeaders();
        }
        List<JsonObject> backendRefs = JsonFields.objects(rule, "backendRefs");
        if (Backends.weightSum(backendRefs) == 0) {
            out.setDirectResponse(HTTPDirectResponse.newBuilder().setStatus(500));
            return Converted.ok(out.build());
        }
        Converted<List<HTTPRouteDestination>> destinations =
                backends.http(backendRefs, GatewayApiKinds.GRPC_ROUTE, route.namespace(), enforceGrants);
        if (destinations.hardError()) {
            return Converted.failed(destinations.error());
        }
        out.addAllRoute(destinations.value());
        return new Converted<>(out.build(), destinations.error());
    }

    /**
     * gRPC's {@code /<service>/<method>} path: exact service and method as an exact path, service
     * alone as a prefix, method alone as a regex; RegularExpression as a regex of the same shape.
     */
    static Converted<StringMatch> methodMatch(JsonObject method) {
        String type = JsonFields.optionalString(method, "type").orElse("Exact");
        Optional<String> service = JsonFields.optionalString(method, "service");
        Optional<String> name = JsonFields.optionalString(method, "method");
        if (service.isEmpty() && name.isEmpty()) {
            return Converted.failed(new ConfigError(RouteReasons.INVALID_CONFIGURATION,
                    "gRPC match must have method or service defined"));
        }
        StringMatch.Builder out = StringMatch.newBuilder();
        switch (type) {
            case "Exact" -> {
                if (name.isEmpty()) {
                    out.setPrefix("/" + service.get() + "/");
                } else if (service.isEmpty()) {
                    out.setRegex("/[^/]+/" + name.get());
                } else {
                    out.setExact("/" + service.get() + "/" + name.get());
                }
            }
            case "RegularExpression" -> {
                if (name.isEmpty()) {
                    out.setRegex("/" + service.get() + "/.+");
                } else if (service.isEmpty()) {
                    out.setRegex("/[^/]+/" + name.get());
                } else {
                    out.setRegex("/" + service.get() + "/" + name.get());
                }
            }
            default -> {
                return Converted.failed(HttpRouteConversion.unknownType(type, "Path match"));
            }
        }
        return Converted.ok(out.build());
    }
}
