package io.meshpilot.config.kube.gateway.convert;

import com.google.gson.JsonObject;
import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import io.meshpilot.api.networking.v1alpha3.CorsPolicy;
import io.meshpilot.api.networking.v1alpha3.Destination;
import io.meshpilot.api.networking.v1alpha3.HTTPMirrorPolicy;
import io.meshpilot.api.networking.v1alpha3.HTTPRedirect;
import io.meshpilot.api.networking.v1alpha3.HTTPRewrite;
import io.meshpilot.api.networking.v1alpha3.Headers;
import io.meshpilot.api.networking.v1alpha3.Percent;
import io.meshpilot.api.networking.v1alpha3.RegexRewrite;
import io.meshpilot.api.networking.v1alpha3.StringMatch;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * HTTPRoute and GRPCRoute filters as Istio route fields (istiod's createHeadersFilter,
 * createRedirectFilter, createRewriteFilter, createMirrorFilter, createCorsFilter).
 */
final class HttpFilters {
    static final String REQUEST_HEADER_MODIFIER = "RequestHeaderModifier";
    static final String RESPONSE_HEADER_MODIFIER = "ResponseHeaderModifier";
    static final String REQUEST_REDIRECT = "RequestRedirect";
    static final String REQUEST_MIRROR = "RequestMirror";
    static final String URL_REWRITE = "URLRewrite";
    static final String CORS = "CORS";
    /** What {@code allowOrigins: ["*"]} admits: any well-formed origin, {@code scheme://host[:port]} (RFC 6454). */
    static final String ANY_ORIGIN = "^[a-zA-Z][a-zA-Z0-9+.-]*://[^/\\s?#]+$";

    private HttpFilters() {
    }

    static ConfigError unsupported(String type) {
        return new ConfigError(RouteReasons.INVALID_FILTER, "unsupported filter type \"" + type + "\"");
    }

    /**
     * A header modifier: {@code set} and {@code add} by lower-cased name (the first of equal names
     * wins, as the API asks), {@code remove} as written. A value with control characters fails the rule.
     */
    static Converted<Headers.HeaderOperations> headers(JsonObject modifier) {
        List<JsonObject> set = JsonFields.objects(modifier, "set");
        List<JsonObject> add = JsonFields.objects(modifier, "add");
        for (JsonObject h : Stream.concat(set.stream(), add.stream()).toList()) {
            if (!validHeaderValue(JsonFields.string(h, "value"))) {
                return Converted.failed(new ConfigError(RouteReasons.INVALID_FILTER,
                        "header \"" + JsonFields.string(h, "name") + "\" value contains invalid characters"));
            }
        }
        Headers.HeaderOperations.Builder ops = Headers.HeaderOperations.newBuilder()
                .putAllSet(byLowerCaseName(set)).putAllAdd(byLowerCaseName(add))
                .addAllRemove(JsonFields.strings(modifier, "remove"));
        return Converted.ok(ops.build());
    }

    private static Map<String, String> byLowerCaseName(List<JsonObject> headers) {
        Map<String, String> out = new LinkedHashMap<>();
        for (JsonObject h : headers) {
            out.putIfAbsent(JsonFields.string(h, "name").toLowerCase(Locale.ROOT), JsonFields.string(h, "value"));
        }
        return out;
    }

    /** Horizontal tab and visible characters only (no other control characters, no DEL). */
    private static boolean validHeaderValue(String value) {
        return value.chars().allMatch(c -> c == 0x09 || (c >= 0x20 && c != 0x7F));
    }

    /**
     * A redirect. Without a port the request's port is kept, unless the scheme changes (then the
     * scheme's default port): the Gateway API's rule, not VirtualService's default.
     */
    static HTTPRedirect redirect(JsonObject filter) {
        HTTPRedirect.Builder out = HTTPRedirect.newBuilder();
        JsonFields.optionalInteger(filter, "statusCode").ifPresent(out::setRedirectCode);
        JsonFields.optionalString(filter, "hostname").ifPresent(out::setAuthority);
        Optional<String> scheme = JsonFields.optionalString(filter, "scheme");
        scheme.ifPresent(out::setScheme);
        Optional<Integer> port = JsonFields.optionalInteger(filter, "port");
        if (port.isPresent()) {
            out.setPort(port.get());
        } else {
            out.setDerivePort(scheme.isPresent() ? HTTPRedirect.RedirectPortSelection.FROM_PROTOCOL_DEFAULT
                    : HTTPRedirect.RedirectPortSelection.FROM_REQUEST_PORT);
        }
        JsonFields.optionalObject(filter, "path").ifPresent(path -> {
            switch (JsonFields.string(path, "type")) {
                case "ReplaceFullPath" -> out.setUri(JsonFields.string(path, "replaceFullPath"));
                // istiod sets prefixRewrite, which istio/api added after 1.30 (docs/CONFIGURATION.md)
                default -> {
                }
            }
        });
        return out.build();
    }

    /**
     * A URL rewrite: a prefix replacement without its trailing slash ({@code /} stays {@code /},
     * which removes the prefix), a full-path replacement as a regex rewrite of the whole path.
     * Empty when it rewrites nothing.
     */
    static Optional<HTTPRewrite> rewrite(JsonObject filter) {
        HTTPRewrite.Builder out = HTTPRewrite.newBuilder();
        JsonFields.optionalObject(filter, "path").ifPresent(path -> {
            switch (JsonFields.string(path, "type")) {
                case "ReplacePrefixMatch" -> {
                    String prefix = JsonFields.string(path, "replacePrefixMatch");
                    String trimmed = prefix.endsWith("/") ? prefix.substring(0, prefix.length() - 1) : prefix;
                    out.setUri(trimmed.isEmpty() ? "/" : trimmed);
                }
                case "ReplaceFullPath" -> out.setUriRegexRewrite(RegexRewrite.newBuilder().setMatch("/.*")
                        .setRewrite(JsonFields.string(path, "replaceFullPath")));
                default -> {
                }
            }
        });
        JsonFields.optionalString(filter, "hostname").ifPresent(out::setAuthority);
        if (out.getUri().isEmpty() && !out.hasUriRegexRewrite() && out.getAuthority().isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(out.build());
    }

    /** A mirror: the backend as for routes, the share as a percentage ({@code fraction} before {@code percent}). */
    static Converted<HTTPMirrorPolicy> mirror(JsonObject filter, Backends backends, String routeKind, String namespace,
                                              boolean enforceGrants) {
        JsonObject ref = JsonFields.optionalObject(filter, "backendRef").orElseGet(JsonObject::new);
        Converted<Destination> dst = backends.destination(ref, routeKind, namespace, enforceGrants);
        if (dst.error() != null) {
            return Converted.failed(dst.error());
        }
        HTTPMirrorPolicy.Builder out = HTTPMirrorPolicy.newBuilder().setDestination(dst.value());
        Optional<JsonObject> fraction = JsonFields.optionalObject(filter, "fraction");
        Optional<Integer> percent = JsonFields.optionalInteger(filter, "percent");
        if (fraction.isPresent()) {
            double numerator = JsonFields.optionalInteger(fraction.get(), "numerator").orElse(0);
            double denominator = JsonFields.optionalInteger(fraction.get(), "denominator").orElse(100);
            out.setPercentage(Percent.newBuilder().setValue(100 * numerator / denominator));
        } else if (percent.isPresent()) {
            out.setPercentage(Percent.newBuilder().setValue(percent.get()));
        }
        return Converted.ok(out.build());
    }

    /**
     * CORS: origin {@code *} as any well-formed origin, an origin without {@code *} exactly, one
     * trailing {@code *} as a prefix, other wildcards as an anchored regex. Preflights from other
     * origins are ignored (passed on), not refused.
     */
    static CorsPolicy cors(JsonObject filter) {
        CorsPolicy.Builder out = CorsPolicy.newBuilder();
        for (String origin : JsonFields.strings(filter, "allowOrigins")) {
            if (origin.isEmpty()) {
                continue;
            }
            StringMatch.Builder m = StringMatch.newBuilder();
            long stars = origin.chars().filter(c -> c == '*').count();
            if (origin.equals("*")) {
                m.setRegex(ANY_ORIGIN);
            } else if (stars == 0) {
                m.setExact(origin);
            } else if (stars == 1 && origin.endsWith("*")) {
                m.setPrefix(origin.substring(0, origin.length() - 1));
            } else {
                m.setRegex("^" + String.join(".*", Stream.of(origin.split("\\*", -1)).map(HttpFilters::quoteRe2).toList())
                        + "$");
            }
            out.addAllowOrigins(m);
        }
        if (JsonFields.string(filter, "allowCredentials").equals("true")) {
            out.setAllowCredentials(BoolValue.of(true));
        }
        out.addAllAllowMethods(JsonFields.strings(filter, "allowMethods"));
        out.addAllAllowHeaders(JsonFields.strings(filter, "allowHeaders"));
        out.addAllExposeHeaders(JsonFields.strings(filter, "exposeHeaders"));
        int maxAge = JsonFields.optionalInteger(filter, "maxAge").orElse(0);
        if (maxAge > 0) {
            out.setMaxAge(Duration.newBuilder().setSeconds(maxAge));
        }
        out.setUnmatchedPreflights(CorsPolicy.UnmatchedPreflights.IGNORE);
        return out.build();
    }

    /** Go's regexp.QuoteMeta: a backslash before each of {@code \.+*?()|[]{}^$}. */
    private static String quoteRe2(String literal) {
        return QUOTE_META.matcher(literal).replaceAll("\\\\$0");
    }

    private static final Pattern QUOTE_META = Pattern.compile("[\\\\.+*?()|\\[\\]{}^$]");
}
