package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import com.google.protobuf.util.Durations;
import io.meshpilot.api.networking.v1alpha3.HTTPDirectResponse;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRetry;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.HTTPRouteDestination;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import io.meshpilot.config.kube.gateway.GatewayApiKinds;
import io.meshpilot.config.kube.gateway.GatewayApiObject;
import io.meshpilot.util.GoDuration;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * One HTTPRoute rule with at most one match into one Istio HTTP route (istiod's
 * convertHTTPRoute): the match, the filters, retry and timeouts, and the weighted backends, or
 * a 500 direct response when no backend has weight and nothing redirects.
 */
final class HttpRouteConversion {
    private static final String RETRY_ON = "connect-failure,refused-stream,unavailable,cancelled";

    private final Backends backends;

    HttpRouteConversion(Backends backends) {
        this.backends = backends;
    }

    /**
     * @param match          the rule's one match, empty for a rule without matches
     * @param index          the rule's position in the route (its default name)
     * @param enforceGrants  false for the mesh form of the route
     */
    Converted<HTTPRoute> convert(GatewayApiObject route, JsonObject rule, Optional<JsonObject> match, int index,
                                 boolean enforceGrants) {
        HTTPRoute.Builder out = HTTPRoute.newBuilder().setName(ruleName(route, rule, index));
        if (match.isPresent()) {
            Converted<HTTPMatchRequest> m = match(match.get());
            if (m.hardError()) {
                return Converted.failed(m.error());
            }
            out.addMatch(m.value());
        }
        ConfigError mirrorError = null;
        for (JsonObject filter : JsonFields.objects(rule, "filters")) {
            String type = JsonFields.string(filter, "type");
            switch (type) {
                case HttpFilters.REQUEST_HEADER_MODIFIER, HttpFilters.RESPONSE_HEADER_MODIFIER -> {
                    ConfigError error = applyHeaders(out.getHeadersBuilder(), filter, type);
                    if (error != null) {
                        return Converted.failed(error);
                    }
                }
                case HttpFilters.REQUEST_REDIRECT -> JsonFields.optionalObject(filter, "requestRedirect")
                        .ifPresent(f -> out.setRedirect(HttpFilters.redirect(f)));
                case HttpFilters.REQUEST_MIRROR -> {
                    Optional<JsonObject> f = JsonFields.optionalObject(filter, "requestMirror");
                    if (f.isPresent()) {
                        var mirror = HttpFilters.mirror(f.get(), backends, GatewayApiKinds.HTTP_ROUTE,
                                route.namespace(), enforceGrants);
                        if (mirror.hardError()) {
                            // istiod keeps the route and reports the mirror's backend
                            mirrorError = mirror.error();
                        } else {
                            out.addMirrors(mirror.value());
                        }
                    }
                }
                case HttpFilters.URL_REWRITE -> JsonFields.optionalObject(filter, "urlRewrite")
                        .flatMap(HttpFilters::rewrite).ifPresent(out::setRewrite);
                case HttpFilters.CORS -> JsonFields.optionalObject(filter, "cors")
                        .ifPresent(f -> out.setCorsPolicy(HttpFilters.cors(f)));
                default -> {
                    return Converted.failed(HttpFilters.unsupported(type));
                }
            }
        }
        if (out.hasHeaders() && out.getHeaders().equals(Headers.getDefaultInstance())) {
            out.clearHeaders();
        }
        JsonFields.optionalObject(rule, "retry").ifPresent(retry -> out.setRetries(retries(retry)));
        JsonFields.optionalObject(rule, "timeouts").ifPresent(timeouts -> applyTimeouts(out, timeouts));
        List<JsonObject> backendRefs = JsonFields.objects(rule, "backendRefs");
        if (Backends.weightSum(backendRefs) == 0 && !out.hasRedirect()) {
            // the API's rule: no backend with weight answers 500
            out.setDirectResponse(HTTPDirectResponse.newBuilder().setStatus(500));
            return new Converted<>(out.build(), mirrorError);
        }
        Converted<List<HTTPRouteDestination>> destinations =
                backends.http(backendRefs, GatewayApiKinds.HTTP_ROUTE, route.namespace(), enforceGrants);
        if (destinations.hardError()) {
            return Converted.failed(destinations.error());
        }
        out.addAllRoute(destinations.value());
        return new Converted<>(out.build(), ConfigError.join(destinations.error(), mirrorError));
    }

    /** The rule's {@code name}, else {@code <namespace>.<route>.<index>}. */
    static String ruleName(GatewayApiObject route, JsonObject rule, int index) {
        return JsonFields.optionalString(rule, "name")
                .orElse(route.namespace() + "." + route.name() + "." + index);
    }

    /** A rule-level header modifier into the route's request or response operations; the error when invalid. */
    static ConfigError applyHeaders(Headers.Builder headers, JsonObject filter, String type) {
        boolean request = type.equals(HttpFilters.REQUEST_HEADER_MODIFIER);
        Optional<JsonObject> modifier =
                JsonFields.optionalObject(filter, request ? "requestHeaderModifier" : "responseHeaderModifier");
        if (modifier.isEmpty()) {
            return null;
        }
        Converted<Headers.HeaderOperations> ops = HttpFilters.headers(modifier.get());
        if (ops.hardError()) {
            return ops.error();
        }
        if (request) {
            headers.setRequest(ops.value());
        } else {
            headers.setResponse(ops.value());
        }
        return null;
    }

    static Converted<HTTPMatchRequest> match(JsonObject match) {
        HTTPMatchRequest.Builder out = HTTPMatchRequest.newBuilder();
        JsonObject path = JsonFields.optionalObject(match, "path").orElseGet(JsonObject::new);
        String type = JsonFields.optionalString(path, "type").orElse("PathPrefix");
        String value = JsonFields.optionalString(path, "value").orElse("/");
        switch (type) {
            case "PathPrefix" -> out.setUri(StringMatch.newBuilder()
                    .setPrefix(!value.equals("/") && value.endsWith("/") ? value.substring(0, value.length() - 1) : value));
            case "Exact" -> out.setUri(StringMatch.newBuilder().setExact(value));
            case "RegularExpression" -> out.setUri(StringMatch.newBuilder().setRegex(value));
            default -> {
                return Converted.failed(unknownType(type, "Path match"));
            }
        }
        Converted<Map<String, StringMatch>> headers = stringMatches(JsonFields.objects(match, "headers"), "HeaderMatch");
        if (headers.hardError()) {
            return Converted.failed(headers.error());
        }
        out.putAllHeaders(headers.value());
        Converted<Map<String, StringMatch>> query =
                stringMatches(JsonFields.objects(match, "queryParams"), "QueryParams");
        if (query.hardError()) {
            return Converted.failed(query.error());
        }
        out.putAllQueryParams(query.value());
        JsonFields.optionalString(match, "method").ifPresent(m -> out.setMethod(StringMatch.newBuilder().setExact(m)));
        return Converted.ok(out.build());
    }

    /** Header or query parameter matches by name as written: {@code Exact} (the default) or {@code RegularExpression}. */
    static Converted<Map<String, StringMatch>> stringMatches(List<JsonObject> matches, String what) {
        Map<String, StringMatch> out = new TreeMap<>();
        for (JsonObject m : matches) {
            String type = JsonFields.optionalString(m, "type").orElse("Exact");
            String value = JsonFields.string(m, "value");
            switch (type) {
                case "Exact" -> out.put(JsonFields.string(m, "name"), StringMatch.newBuilder().setExact(value).build());
                case "RegularExpression" ->
                        out.put(JsonFields.string(m, "name"), StringMatch.newBuilder().setRegex(value).build());
                default -> {
                    return Converted.failed(unknownType(type, what));
                }
            }
        }
        return Converted.ok(out);
    }

    static ConfigError unknownType(String type, String what) {
        return new ConfigError(RouteReasons.INVALID_CONFIGURATION,
                "unknown type: \"" + type + "\" is not supported " + what + " type");
    }

    /**
     * Retries on connection failures plus the listed codes; 2 attempts when unset (Envoy's
     * default when a route has no policy); no retry conditions when attempts is 0.
     */
    private static HTTPRetry retries(JsonObject retry) {
        List<String> retryOn = new ArrayList<>(List.of(RETRY_ON));
        JsonFields.strings(retry, "codes").forEach(retryOn::add);
        int attempts = JsonFields.optionalInteger(retry, "attempts").orElse(2);
        HTTPRetry.Builder out = HTTPRetry.newBuilder().setAttempts(attempts)
                .setRetryOn(attempts == 0 ? "" : String.join(",", retryOn));
        JsonFields.optionalString(retry, "backoff").ifPresent(b -> out.setBackoff(Durations.fromNanos(goDuration(b).toNanos())));
        return out.build();
    }

    /** {@code request} as the route timeout; {@code backendRequest} per try when retrying, else as the timeout. */
    private static void applyTimeouts(HTTPRoute.Builder out, JsonObject timeouts) {
        JsonFields.optionalString(timeouts, "request").map(HttpRouteConversion::goDuration)
                .filter(d -> !d.isZero()).ifPresent(d -> out.setTimeout(Durations.fromNanos(d.toNanos())));
        JsonFields.optionalString(timeouts, "backendRequest").map(HttpRouteConversion::goDuration)
                .filter(d -> !d.isZero()).ifPresent(d -> {
                    if (out.hasRetries()) {
                        out.getRetriesBuilder().setPerTryTimeout(Durations.fromNanos(d.toNanos()));
                    } else {
                        out.setTimeout(Durations.fromNanos(d.toNanos()));
                    }
                });
    }

    /** A Gateway API duration; an unparsable one counts as zero, as istiod ignores the parse error. */
    private static Duration goDuration(String text) {
        try {
            return GoDuration.parse(text);
        } catch (IllegalArgumentException e) {
            return Duration.ZERO;
        }
    }
}
