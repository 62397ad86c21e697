package io.meshpilot.networking.authz;

import io.envoyproxy.envoy.config.route.v3.HeaderMatcher;
import io.envoyproxy.envoy.type.matcher.v3.ListMatcher;
import io.envoyproxy.envoy.type.matcher.v3.MetadataMatcher;
import io.envoyproxy.envoy.type.matcher.v3.OrMatcher;
import io.envoyproxy.envoy.type.matcher.v3.PathMatcher;
import io.envoyproxy.envoy.type.matcher.v3.RegexMatcher;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.envoyproxy.envoy.type.matcher.v3.ValueMatcher;
import java.util.ArrayList;
import java.util.List;

/**
 * The Envoy matchers an AuthorizationPolicy value becomes, with istiod's wildcard rules
 * (its authz/matcher package): {@code *} alone means "present / any non-empty value", a
 * leading {@code *} a suffix match, a trailing {@code *} a prefix match, anything else an
 * exact match. Hosts compare without case; everything else with it.
 */
final class AuthzMatchers {
    /** The dynamic metadata namespace and key where jwt_authn puts the verified token's payload. */
    static final String JWT_FILTER = "envoy.filters.http.jwt_authn";
    static final String JWT_PAYLOAD = "payload";

    private AuthzMatchers() {
    }

    static StringMatcher string(String v) {
        return withPrefix(v, "");
    }

    /** istiod's StringMatcherWithPrefix: the value's wildcard applied after a fixed prefix (e.g. {@code spiffe://}). */
    static StringMatcher withPrefix(String v, String prefix) {
        if (v.equals("*")) {
            return regex(".+");
        }
        if (v.startsWith("*")) {
            return prefix.isEmpty() ? suffix(v.substring(1), false)
                    : regex(prefix + ".*" + quoteMeta(v.substring(1)));
        }
        if (v.endsWith("*")) {
            return prefix(prefix + v.substring(0, v.length() - 1), false);
        }
        return exact(prefix + v, false);
    }

    static StringMatcher regex(String regex) {
        return StringMatcher.newBuilder().setSafeRegex(RegexMatcher.newBuilder().setRegex(regex)).build();
    }

    static StringMatcher prefix(String p, boolean ignoreCase) {
        return StringMatcher.newBuilder().setPrefix(p).setIgnoreCase(ignoreCase).build();
    }

    static StringMatcher suffix(String s, boolean ignoreCase) {
        return StringMatcher.newBuilder().setSuffix(s).setIgnoreCase(ignoreCase).build();
    }

    static StringMatcher exact(String e, boolean ignoreCase) {
        return StringMatcher.newBuilder().setExact(e).setIgnoreCase(ignoreCase).build();
    }

    /** Go's regexp.QuoteMeta: escapes every RE2 metacharacter (Envoy's safe_regex is RE2). */
    static String quoteMeta(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            if ("\\.+*?()|[]{}^$".indexOf(c) >= 0) {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }

    /** A request header matched case-sensitively ({@code :method}, {@code request.headers[...]}). */
    static HeaderMatcher header(String name, String v) {
        return header(name, v, false);
    }

    /** The {@code :authority} header, matched without case as DNS names are. */
    static HeaderMatcher host(String name, String v) {
        return header(name, v, true);
    }

    private static HeaderMatcher header(String name, String v, boolean ignoreCase) {
        HeaderMatcher.Builder h = HeaderMatcher.newBuilder().setName(name);
        if (v.equals("*")) {
            return h.setPresentMatch(true).build();
        }
        if (v.startsWith("*")) {
            return h.setStringMatch(suffix(v.substring(1), ignoreCase)).build();
        }
        if (v.endsWith("*")) {
            return h.setStringMatch(prefix(v.substring(0, v.length() - 1), ignoreCase)).build();
        }
        return h.setStringMatch(exact(v, ignoreCase)).build();
    }

    static PathMatcher path(String path) {
        return PathMatcher.newBuilder().setPath(string(path)).build();
    }

    static ValueMatcher stringValue(StringMatcher m) {
        return ValueMatcher.newBuilder().setStringMatch(m).build();
    }

    /** One value matcher, or an OR of several (istiod's OrMatcher). */
    static ValueMatcher or(List<ValueMatcher> matchers) {
        if (matchers.size() == 1) {
            return matchers.get(0);
        }
        return ValueMatcher.newBuilder().setOrMatch(OrMatcher.newBuilder().addAllValueMatchers(matchers)).build();
    }

    static ValueMatcher stringOr(List<String> values) {
        return or(values.stream().map(v -> stringValue(string(v))).toList());
    }

    static MetadataMatcher metadataValue(String filter, String key, ValueMatcher value) {
        return MetadataMatcher.newBuilder().setFilter(filter)
                .addPath(MetadataMatcher.PathSegment.newBuilder().setKey(key)).setValue(value).build();
    }

    /**
     * A metadata value under {@code keys} that is a list holding a match, or (for JWT claims,
     * which may be a string or a list) the value itself matching.
     */
    static MetadataMatcher metadataList(String filter, List<String> keys, ValueMatcher value, boolean orPlain) {
        MetadataMatcher.Builder m = MetadataMatcher.newBuilder().setFilter(filter);
        keys.forEach(k -> m.addPath(MetadataMatcher.PathSegment.newBuilder().setKey(k)));
        ValueMatcher list = ValueMatcher.newBuilder().setListMatch(ListMatcher.newBuilder().setOneOf(value)).build();
        if (orPlain) {
            m.setValue(ValueMatcher.newBuilder().setOrMatch(OrMatcher.newBuilder().addValueMatchers(list)
                    .addValueMatchers(value)));
        } else {
            m.setValue(list);
        }
        return m.build();
    }

    /** A claim of the verified JWT, under jwt_authn's payload metadata. */
    static MetadataMatcher jwtClaims(List<String> claims, ValueMatcher value) {
        List<String> keys = new ArrayList<>();
        keys.add(JWT_PAYLOAD);
        keys.addAll(claims);
        return metadataList(JWT_FILTER, keys, value, true);
    }

    /** One string claim ({@code iss}, {@code sub}) of the verified JWT. */
    static MetadataMatcher jwtClaim(String claim, StringMatcher m) {
        return MetadataMatcher.newBuilder().setFilter(JWT_FILTER)
                .addPath(MetadataMatcher.PathSegment.newBuilder().setKey(JWT_PAYLOAD))
                .addPath(MetadataMatcher.PathSegment.newBuilder().setKey(claim))
                .setValue(stringValue(m)).build();
    }
}
