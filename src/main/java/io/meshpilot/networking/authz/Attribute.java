package io.meshpilot.networking.authz;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.config.rbac.v3.Permission;
import io.envoyproxy.envoy.config.rbac.v3.Principal;
import io.envoyproxy.envoy.extensions.path.match.uri_template.v3.UriTemplateMatchConfig;
import io.envoyproxy.envoy.type.matcher.v3.ListMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.matcher.v3.ValueMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * One attribute of an AuthorizationPolicy rule (a source or operation field, or a
 * {@code when} key) and the Envoy RBAC matcher each of its values becomes (istiod's
 * authz/model generators). Most attributes turn one value into one matcher (OR-ed by the
 * caller); the "extended" ones (JWT claims, request principals, Envoy metadata) turn all values
 * into one matcher. An attribute that does not apply to a permission, a principal or a TCP
 * chain throws {@link UnsupportedValue}.
 */
enum Attribute {
    DESTINATION_IP("destination.ip") {
        @Override
        Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
            return Permission.newBuilder().setDestinationIp(CidrRanges.of(value)).build();
        }
    },
    DESTINATION_PORT("destination.port") {
        @Override
        Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
            return Permission.newBuilder().setDestinationPort(port(value)).build();
        }
    },
    CONNECTION_SNI("connection.sni") {
        @Override
        Permission permission(String key, String value, Chain chain) {
            return Permission.newBuilder().setRequestedServerName(AuthzMatchers.string(value)).build();
        }
    },
    /** {@code experimental.envoy.filters.<filter>[<key>]}: dynamic metadata another filter wrote. */
    ENVOY_FILTER("experimental.envoy.filters.") {
        @Override
        boolean extended() {
            return true;
        }

        @Override
        Permission permission(String key, List<String> values, Chain chain) throws UnsupportedValue {
            String[] parts = filterAndKey(key);
            List<ValueMatcher> matchers = new ArrayList<>();
            for (String v : values) {
                if (v.startsWith("[") && v.endsWith("]")) {
                    matchers.add(ValueMatcher.newBuilder().setListMatch(ListMatcher.newBuilder().setOneOf(
                            AuthzMatchers.stringValue(AuthzMatchers.string(trimBrackets(v))))).build());
                } else {
                    matchers.add(AuthzMatchers.stringValue(AuthzMatchers.string(v)));
                }
            }
            return Permission.newBuilder().setMetadata(AuthzMatchers.metadataValue(parts[0], parts[1],
                    AuthzMatchers.or(matchers))).build();
        }
    },
    SOURCE_IP("source.ip") {
        @Override
        Principal principal(String key, String value, Chain chain) throws UnsupportedValue {
            return Principal.newBuilder().setDirectRemoteIp(CidrRanges.of(value)).build();
        }
    },
    REMOTE_IP("remote.ip") {
        @Override
        Principal principal(String key, String value, Chain chain) throws UnsupportedValue {
            return Principal.newBuilder().setRemoteIp(CidrRanges.of(value)).build();
        }
    },
    SOURCE_NAMESPACE("source.namespace") {
        @Override
        Principal principal(String key, String value, Chain chain) {
            String[] literal = value.split("\\*", -1);
            StringBuilder ns = new StringBuilder();
            for (int i = 0; i < literal.length; i++) {
                ns.append(i > 0 ? ".*" : "").append(AuthzMatchers.quoteMeta(literal[i]));
            }
            return authenticated(AuthzMatchers.regex(".*/ns/" + ns + "/.*"));
        }
    },
    /** {@code source.serviceAccount} / {@code serviceAccounts}: {@code [ns/]sa} in the policy's namespace by default. */
    SOURCE_SERVICE_ACCOUNT("source.serviceAccount") {
        @Override
        Principal principal(String key, String value, Chain chain) {
            throw new IllegalStateException("needs the policy namespace"); // built by serviceAccount()
        }
    },
    SOURCE_TRUST_DOMAIN("source.trustDomain") {
        @Override
        Principal principal(String key, String value, Chain chain) {
            StringMatcher m;
            if (value.equals("*")) {
                m = AuthzMatchers.prefix("spiffe://", false);
            } else if (!value.contains("*")) {
                m = AuthzMatchers.prefix("spiffe://" + value + "/", false);
            } else {
                int star = value.indexOf('*');
                m = AuthzMatchers.regex("spiffe://" + AuthzMatchers.quoteMeta(value.substring(0, star)) + "[^/]*"
                        + AuthzMatchers.quoteMeta(value.substring(star + 1)) + "/.*");
            }
            return authenticated(m);
        }
    },
    SOURCE_PRINCIPAL("source.principal") {
        @Override
        Principal principal(String key, String value, Chain chain) {
            return authenticated(AuthzMatchers.withPrefix(value, "spiffe://"));
        }
    },
    REQUEST_PRINCIPAL("request.auth.principal") {
        @Override
        boolean extended() {
            return true;
        }

        @Override
        Principal principal(String key, List<String> values, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            List<Principal> or = new ArrayList<>();
            for (String value : values) {
                or.add(requestPrincipal(value));
            }
            return or.size() == 1 ? or.get(0) : RbacRules.principalOr(or);
        }
    },
    REQUEST_AUDIENCES("request.auth.audiences") {
        @Override
        boolean extended() {
            return true;
        }

        @Override
        Principal principal(String key, List<String> values, Chain chain) throws UnsupportedValue {
            return claim(key, "aud", values, chain);
        }
    },
    REQUEST_PRESENTER("request.auth.presenter") {
        @Override
        boolean extended() {
            return true;
        }

        @Override
        Principal principal(String key, List<String> values, Chain chain) throws UnsupportedValue {
            return claim(key, "azp", values, chain);
        }
    },
    REQUEST_HEADER("request.headers") {
        @Override
        Principal principal(String key, String value, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            String header = nameInBrackets(key.substring(name.length()));
            if (chain == Chain.GRPC && (header.startsWith("grpc-") || header.equals(":scheme"))) {
                throw new UnsupportedValue("header " + header + " cannot be matched by gRPC servers");
            }
            return Principal.newBuilder().setHeader(AuthzMatchers.header(header, value)).build();
        }
    },
    REQUEST_CLAIMS("request.auth.claims") {
        @Override
        boolean extended() {
            return true;
        }

        @Override
        Principal principal(String key, List<String> values, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            List<String> claims = namesInNestedBrackets(key.substring(name.length()));
            return Principal.newBuilder().setMetadata(AuthzMatchers.jwtClaims(claims, AuthzMatchers.stringOr(values)))
                    .build();
        }
    },
    HOST(":authority") {
        @Override
        Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            return Permission.newBuilder().setHeader(AuthzMatchers.host(":authority", value)).build();
        }
    },
    PATH("path-matcher") {
        @Override
        Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            if (value.contains("{*}") || value.contains("{**}")) {
                if (chain == Chain.GRPC) {
                    throw new UnsupportedValue("path template " + value + " is not supported by gRPC servers");
                }
                UriTemplateMatchConfig template = UriTemplateMatchConfig.newBuilder()
                        .setPathTemplate(value.replace("{**}", "**").replace("{*}", "*")).build();
                return Permission.newBuilder().setUriTemplate(TypedExtensionConfig.newBuilder()
                        .setName("uri-template").setTypedConfig(Any.pack(template))).build();
            }
            return Permission.newBuilder().setUrlPath(AuthzMatchers.path(value)).build();
        }
    },
    METHOD(":method") {
        @Override
        Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
            httpOnly(key, chain);
            return Permission.newBuilder().setHeader(AuthzMatchers.header(":method", value)).build();
        }
    };

    /** The condition key (or key prefix, for keys that carry a name in brackets). */
    final String name;

    Attribute(String name) {
        this.name = name;
    }

    /** Whether all values become one matcher (else one matcher per value, OR-ed). */
    boolean extended() {
        return false;
    }

    Permission permission(String key, String value, Chain chain) throws UnsupportedValue {
        throw new UnsupportedValue(key + " is not an operation attribute");
    }

    Principal principal(String key, String value, Chain chain) throws UnsupportedValue {
        throw new UnsupportedValue(key + " is not a source attribute");
    }

    Permission permission(String key, List<String> values, Chain chain) throws UnsupportedValue {
        throw new UnsupportedValue(key + " is not an operation attribute");
    }

    Principal principal(String key, List<String> values, Chain chain) throws UnsupportedValue {
        throw new UnsupportedValue(key + " is not a source attribute");
    }

    /** The attribute of a {@code when} key, or null when istiod does not know it. */
    static Attribute ofConditionKey(String key) {
        return switch (key) {
            case "destination.ip" -> DESTINATION_IP;
            case "destination.port" -> DESTINATION_PORT;
            case "connection.sni" -> CONNECTION_SNI;
            case "source.ip" -> SOURCE_IP;
            case "remote.ip" -> REMOTE_IP;
            case "source.namespace" -> SOURCE_NAMESPACE;
            case "source.trustDomain" -> SOURCE_TRUST_DOMAIN;
            case "source.serviceAccount" -> SOURCE_SERVICE_ACCOUNT;
            case "source.principal" -> SOURCE_PRINCIPAL;
            case "request.auth.principal" -> REQUEST_PRINCIPAL;
            case "request.auth.audiences" -> REQUEST_AUDIENCES;
            case "request.auth.presenter" -> REQUEST_PRESENTER;
            default -> key.startsWith(ENVOY_FILTER.name) ? ENVOY_FILTER
                    : key.startsWith(REQUEST_HEADER.name) ? REQUEST_HEADER
                    : key.startsWith(REQUEST_CLAIMS.name) ? REQUEST_CLAIMS
                    : null;
        };
    }

    /** Whether the attribute's matchers go into the permission (else into the principal). */
    boolean isPermission() {
        return switch (this) {
            case DESTINATION_IP, DESTINATION_PORT, CONNECTION_SNI, ENVOY_FILTER, HOST, PATH, METHOD -> true;
            default -> false;
        };
    }

    static Principal authenticated(StringMatcher m) {
        return Principal.newBuilder().setAuthenticated(Principal.Authenticated.newBuilder().setPrincipalName(m))
                .build();
    }

    /**
     * The SPIFFE id pattern of a service account ({@code sa} in {@code defaultNamespace}, or
     * {@code ns/sa}): any trust domain, optional extra segments, nothing glued to the name.
     */
    static Principal serviceAccount(String defaultNamespace, String value) {
        int slash = value.indexOf('/');
        String ns = slash < 0 ? defaultNamespace : value.substring(0, slash);
        String sa = slash < 0 ? value : value.substring(slash + 1);
        return authenticated(AuthzMatchers.regex("spiffe://.+/ns/" + AuthzMatchers.quoteMeta(ns) + "/(.+/|)sa/"
                + AuthzMatchers.quoteMeta(sa) + "(/.+)?"));
    }

    private static final StringMatcher MATCH_ANY = AuthzMatchers.regex(".+");

    /** {@code iss/sub} of a verified JWT (the issuer may hold slashes: the last one splits), with wildcards. */
    private static Principal requestPrincipal(String value) {
        int idx = value.lastIndexOf('/');
        boolean found = idx >= 0;
        String iss = found ? value.substring(0, idx) : value;
        String sub = found ? value.substring(idx + 1) : "";
        StringMatcher matchIss;
        StringMatcher matchSub;
        if (value.equals("*")) {
            matchIss = MATCH_ANY;
            matchSub = MATCH_ANY;
        } else if (value.startsWith("*")) {
            if (found) {
                matchIss = iss.equals("*") ? MATCH_ANY : AuthzMatchers.suffix(iss.substring(1), false);
                matchSub = AuthzMatchers.exact(sub, false);
            } else {
                matchIss = MATCH_ANY;
                matchSub = AuthzMatchers.suffix(value.substring(1), false);
            }
        } else if (value.endsWith("*")) {
            if (found) {
                matchIss = AuthzMatchers.exact(iss, false);
                matchSub = sub.equals("*") ? MATCH_ANY : AuthzMatchers.prefix(sub.substring(0, sub.length() - 1), false);
            } else {
                matchIss = AuthzMatchers.prefix(value.substring(0, value.length() - 1), false);
                matchSub = MATCH_ANY;
            }
        } else {
            matchIss = AuthzMatchers.exact(iss, false);
            matchSub = AuthzMatchers.exact(sub, false);
        }
        return RbacRules.principalAnd(List.of(
                Principal.newBuilder().setMetadata(AuthzMatchers.jwtClaim("iss", matchIss)).build(),
                Principal.newBuilder().setMetadata(AuthzMatchers.jwtClaim("sub", matchSub)).build()));
    }

    /** A list match on one claim of the verified token ({@code request.auth.audiences}, {@code .presenter}). */
    static Principal claim(String key, String claim, List<String> values, Chain chain) throws UnsupportedValue {
        httpOnly(key, chain);
        return Principal.newBuilder().setMetadata(AuthzMatchers.jwtClaims(List.of(claim),
                AuthzMatchers.stringOr(values))).build();
    }

    private static void httpOnly(String key, Chain chain) throws UnsupportedValue {
        if (chain == Chain.TCP) {
            throw new UnsupportedValue("\"" + key + "\" is HTTP only");
        }
    }

    private static int port(String v) throws UnsupportedValue {
        try {
            long p = Long.parseLong(v);
            if (p >= 0 && p <= 65535 && !v.startsWith("+") && !v.startsWith("-")) {
                return (int) p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new UnsupportedValue("invalid port " + v);
    }

    private static String trimBrackets(String v) {
        int from = 0;
        int to = v.length();
        while (from < to && (v.charAt(from) == '[' || v.charAt(from) == ']')) {
            from++;
        }
        while (to > from && (v.charAt(to - 1) == '[' || v.charAt(to - 1) == ']')) {
            to--;
        }
        return v.substring(from, to);
    }

    /** {@code experimental.envoy.filters.a.b[c]} -> {@code envoy.filters.a.b} and {@code c}. */
    private static String[] filterAndKey(String key) throws UnsupportedValue {
        String k = key.substring("experimental.".length());
        if (k.endsWith("]")) {
            k = k.substring(0, k.length() - 1);
        }
        int open = k.indexOf('[');
        if (open < 0) {
            throw new UnsupportedValue("invalid key: " + key);
        }
        return new String[] {k.substring(0, open), k.substring(open + 1)};
    }

    static String nameInBrackets(String s) throws UnsupportedValue {
        if (!s.startsWith("[") || !s.endsWith("]")) {
            throw new UnsupportedValue("expecting format [<NAME>], but found " + s);
        }
        return s.substring(1, s.length() - 1);
    }

    /** {@code [a][b]} -> a, b; anything else is read as one {@code [name]}. */
    static List<String> namesInNestedBrackets(String s) throws UnsupportedValue {
        List<String> claims = new ArrayList<>();
        int begin = 0;
        while (begin < s.length()) {
            int end = -1;
            if (s.charAt(begin) == '[') {
                for (int i = begin + 1; i < s.length(); i++) {
                    if (s.charAt(i) == '[') {
                        break;
                    }
                    if (s.charAt(i) == ']') {
                        end = i;
                        break;
                    }
                }
            }
            if (end == -1) {
                return List.of(nameInBrackets(s));
            }
            claims.add(s.substring(begin + 1, end));
            begin = end + 1;
        }
        return claims;
    }
}
