package io.meshpilot.config.validation.policy;

import java.util.List;
import java.util.regex.Pattern;

/**
 * The value formats AuthorizationPolicy rules use (istiod's pkg/config/security): port
 * strings, service accounts, path templates, and the attribute keys of {@code when}
 * conditions with the value format each expects. Each check answers with a reason, or null.
 */
public final class AuthzValues {
    private static final String MATCH_ONE = "{*}";
    private static final String MATCH_ANY = "{**}";
    /** An RFC 3986 pchar run: what a literal path segment next to a template may hold. */
    private static final Pattern PCHARS = Pattern.compile("[a-zA-Z0-9\\-._~%!$&'()+,;:@=]+");
    public static final int MAX_SERVICE_ACCOUNTS = 16;
    private static final int MAX_SERVICE_ACCOUNT_LENGTH = 320;

    /** How the values of a condition key are checked. */
    public enum ValueKind {
        ANY, IP, PORT, SERVICE_ACCOUNT, WILDCARD
    }

    /** A condition key istiod accepts: exact, or a prefix that needs a "[name]" suffix. */
    private record Key(String name, boolean mapKey, ValueKind values) {
    }

    /** The supported condition keys (istio.io "Authorization Policy Conditions"). */
    private static final List<Key> KEYS = List.of(
            new Key("request.headers", true, ValueKind.ANY),
            new Key("request.experimental.inline.headers", true, ValueKind.ANY),
            new Key("source.ip", false, ValueKind.IP),
            new Key("remote.ip", false, ValueKind.IP),
            new Key("source.namespace", false, ValueKind.ANY),
            new Key("source.serviceAccount", false, ValueKind.SERVICE_ACCOUNT),
            new Key("source.trustDomain", false, ValueKind.WILDCARD),
            new Key("source.principal", false, ValueKind.ANY),
            new Key("request.auth.principal", false, ValueKind.ANY),
            new Key("request.auth.audiences", false, ValueKind.ANY),
            new Key("request.auth.presenter", false, ValueKind.ANY),
            new Key("request.auth.claims", true, ValueKind.ANY),
            new Key("destination.ip", false, ValueKind.IP),
            new Key("destination.port", false, ValueKind.PORT),
            new Key("connection.sni", false, ValueKind.ANY),
            new Key("experimental.envoy.filters.", true, ValueKind.ANY));

    private AuthzValues() {
    }

    /** A port as written in a rule or condition: decimal digits, 0-65535. */
    public static String port(String p) {
        if (p.isEmpty() || p.length() > 10 || !p.chars().allMatch(c -> c >= '0' && c <= '9')
                || Long.parseLong(p) > 65535) {
            return "\"" + p + "\" is not a valid port (a number 0-65535)";
        }
        return null;
    }

    /** A value matched exactly, by prefix ("a*"), suffix ("*a") or presence ("*"): one wildcard, at an end. */
    public static String wildcard(String value) {
        int stars = (int) value.chars().filter(c -> c == '*').count();
        if (stars > 1) {
            return "at most one wildcard is allowed, found \"" + value + "\"";
        }
        if (stars == 1 && !value.startsWith("*") && !value.endsWith("*")) {
            return "a wildcard is only allowed at the start or end, found \"" + value + "\"";
        }
        return null;
    }

    /** A trust domain as sources name it: a {@link #wildcard} value without '/'. */
    public static String trustDomain(String value) {
        String why = wildcard(value);
        if (why == null && value.contains("/")) {
            why = "a trust domain must not contain '/', found \"" + value + "\"";
        }
        return why;
    }

    /** "name" or "namespace/name"; no wildcards, at most 320 characters. */
    public static String serviceAccount(String sa) {
        if (sa.isEmpty()) {
            return "empty value is not allowed";
        }
        if (sa.contains("*")) {
            return "wildcards are not allowed in service accounts";
        }
        if (sa.length() > MAX_SERVICE_ACCOUNT_LENGTH) {
            return "service account is longer than " + MAX_SERVICE_ACCOUNT_LENGTH + " characters";
        }
        int slash = sa.indexOf('/');
        if (slash >= 0 && (sa.indexOf('/', slash + 1) >= 0 || slash == 0 || slash == sa.length() - 1)) {
            return "\"" + sa + "\" must be \"serviceAccount\" or \"namespace/serviceAccount\"";
        }
        return null;
    }

    /**
     * istiod's path template rule: "{*}" and "{**}" must be whole segments, "{**}" only last,
     * no other braces; in a templated path every other segment must be plain URL path text.
     */
    public static String path(String path) {
        boolean templated = path.contains(MATCH_ONE) || path.contains(MATCH_ANY);
        String trimmed = trimSlashes(path);
        boolean sawAny = false;
        for (String seg : trimmed.split("/", -1)) {
            if ((seg.equals(MATCH_ONE) || seg.equals(MATCH_ANY)) && sawAny) {
                return "invalid path template \"" + path + "\": {**} must be the last operator";
            }
            if (seg.equals(MATCH_ONE)) {
                continue;
            }
            if (seg.equals(MATCH_ANY)) {
                sawAny = true;
                continue;
            }
            if (seg.indexOf('{') >= 0 || seg.indexOf('}') >= 0) {
                return "invalid path \"" + path + "\": only whole-segment {*} and {**} templates may use braces";
            }
            if (templated && !PCHARS.matcher(seg).matches()) {
                return "invalid path template \"" + path + "\": segment \"" + seg + "\" is not a valid literal";
            }
        }
        return null;
    }

    private static String trimSlashes(String s) {
        int b = 0;
        int e = s.length();
        while (b < e && s.charAt(b) == '/') {
            b++;
        }
        while (e > b && s.charAt(e - 1) == '/') {
            e--;
        }
        return s.substring(b, e);
    }

    /**
     * Why a condition key is not accepted, or null. Keys istiod knows but rejects (replaced or
     * only in the old API) say so.
     */
    public static String conditionKey(String key) {
        if (key.equals("destination.namespace")) {
            return "attribute " + key + " is not supported: the policy's own namespace (metadata.namespace) scopes it";
        }
        if (key.startsWith("destination.labels")) {
            return "attribute " + key + " is not supported: use the workload selector instead";
        }
        if (key.equals("destination.name") || key.equals("destination.user")) {
            return "attribute " + key + " was only supported in the v1alpha1 API";
        }
        Key k = find(key);
        if (k == null) {
            return "unknown attribute \"" + key + "\"";
        }
        if (k.mapKey()) {
            int open = key.indexOf('[');
            if (!(key.endsWith("]") && open > 0 && open < key.length() - 2)) {
                return "attribute \"" + key + "\" must name an entry, as in " + k.name().replaceAll("\\.$", "")
                        + "[name]";
            }
        }
        return null;
    }

    /** How the values of a (supported) key are checked. */
    public static ValueKind valueKind(String key) {
        Key k = find(key);
        return k == null ? ValueKind.ANY : k.values();
    }

    private static Key find(String key) {
        for (Key k : KEYS) {
            if (k.mapKey() ? key.startsWith(k.name()) : key.equals(k.name())) {
                return k;
            }
        }
        return null;
    }
}
