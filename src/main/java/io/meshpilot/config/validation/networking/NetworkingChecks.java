package io.meshpilot.config.validation.networking;

import com.google.protobuf.Duration;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Checks;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.util.IpAddr;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;
import java.util.stream.Collectors;

/**
 * Building blocks shared by the networking validators, in the shape istiod's
 * pkg/config/validation and pkg/config/validation/agent give them: host names with and without
 * wildcards, namespace/host pairs, protocols, header names and values, exportTo, workload
 * selectors, unix socket paths and RE2-compatible regular expressions. Each reports into a
 * {@link Validation} view and returns whether the value passed.
 */
final class NetworkingChecks {
    static final String UNIX_PREFIX = "unix://";
    /** Header names that match on and manipulate: letters, digits, '-' and '_'. */
    private static final Pattern HEADER_NAME = Pattern.compile("[-_A-Za-z0-9]+");
    private static final Pattern DIGITS = Pattern.compile("[0-9]+");
    /** RE2 (Envoy) limits a counted repetition to 1000. */
    private static final int MAX_REPEAT = 1000;
    /** Envoy bounds regex program size; istiod approximates it by length. */
    private static final int MAX_REGEX_LENGTH = 1024;

    private NetworkingChecks() {
    }

    // ---- hosts ------------------------------------------------------------------------------

    static boolean isDnsLabel(String s) {
        return Checks.isDns1123Label(s);
    }

    /** The label rule istiod applies to the first label of a host that may carry a wildcard. */
    static boolean isWildcardLabel(String s) {
        if (s == null || s.isEmpty() || s.length() > 63) {
            return false;
        }
        if (s.equals("*")) {
            return true;
        }
        String rest = s.startsWith("*-") ? s.substring(2) : s.startsWith("*") ? s.substring(1) : s;
        return isDnsLabel(rest);
    }

    /** Null when {@code host} is a valid (possibly wildcarded) domain name, else the reason. */
    static String wildcardDomainProblem(String host) {
        String p = dnsPreconditions(host);
        if (p != null) {
            return p;
        }
        String[] parts = host.split("\\.", 2);
        if (!isWildcardLabel(parts[0])) {
            return "domain name \"" + host + "\" is invalid: label \"" + parts[0] + "\" is not a DNS-1123 label "
                    + "(a wildcard is allowed only at the start of the first label)";
        }
        return parts.length > 1 ? labelsProblem(host, parts[1]) : null;
    }

    /** Null when {@code host} is a valid fully qualified or short domain name (no wildcard). */
    static String fqdnProblem(String host) {
        String p = dnsPreconditions(host);
        return p != null ? p : labelsProblem(host, host);
    }

    private static String dnsPreconditions(String host) {
        if (host == null || host.isEmpty()) {
            return "domain name must not be empty";
        }
        if (host.length() > 255) {
            return "domain name \"" + host + "\" is longer than 255 characters";
        }
        return null;
    }

    /** Labels of a domain (a trailing dot is allowed); the last label must not be all digits. */
    private static String labelsProblem(String host, String domain) {
        String[] labels = domain.split("\\.", -1);
        String top = labels[labels.length - 1];
        if (DIGITS.matcher(top).matches()) {
            return "domain name \"" + host + "\" is invalid: the top-level label \"" + top + "\" is all digits";
        }
        for (int i = 0; i < labels.length; i++) {
            if (i == labels.length - 1 && labels[i].isEmpty() && labels.length > 1) {
                return null; // "istio.io." is an unambiguous absolute name
            }
            if (!isDnsLabel(labels[i])) {
                return "domain name \"" + host + "\" is invalid: label \"" + labels[i] + "\" is not a DNS-1123 label";
            }
        }
        return null;
    }

    static boolean wildcardDomain(Validation v, String host) {
        return report(v, wildcardDomainProblem(host));
    }

    static boolean fqdn(Validation v, String host) {
        return report(v, fqdnProblem(host));
    }

    static boolean isFqdn(String host) {
        return fqdnProblem(host) == null;
    }

    /** istiod's netutil.IsValidIPAddress (Go's netip.ParseAddr). */
    static boolean isIp(String s) {
        return Checks.isIp(s);
    }

    /** istiod's ValidateIPSubnet: a CIDR block when the value has exactly one slash, else an address. */
    static boolean ipOrSubnet(Validation v, String s) {
        return report(v, Checks.ipOrCidrProblem(s));
    }

    /** istiod's ValidateIPAddress (Go's netip.ParseAddr). */
    static boolean ip(Validation v, String s) {
        String why = IpAddr.problem(s);
        return report(v, why == null ? null : "\"" + s + "\" is not a valid IP address: " + why);
    }

    /** istiod's partial-wildcard rule: "*" alone or a leading "*." only. */
    static String partialWildcardProblem(String host) {
        if (host.contains("*") && host.length() != 1 && !host.startsWith("*.")) {
            return "partial wildcard \"" + host + "\" is not allowed (use \"*\" or a leading \"*.\")";
        }
        return null;
    }

    /**
     * A "namespace/host" entry of a Sidecar egress listener or a Gateway server (istiod's
     * ValidateNamespaceSlashWildcardHostname). Gateways also take a plain host, or an IP.
     */
    static void namespaceSlashHost(Validation v, String value, boolean gateway) {
        int slash = value.indexOf('/');
        if (slash < 0) {
            if (gateway) {
                hostPart(v, value, true);
            } else {
                v.error("host \"" + value + "\" must be of the form namespace/dnsName");
            }
            return;
        }
        String ns = value.substring(0, slash);
        String host = value.substring(slash + 1);
        if (ns.isEmpty() || host.isEmpty()) {
            v.error("host \"" + value + "\": namespace and dnsName must not be empty");
            return;
        }
        boolean nsOk = ns.equals("*") || ns.equals(".") || (!gateway && ns.equals("~")) || isDnsLabel(ns);
        if (!nsOk) {
            v.error("host \"" + value + "\": invalid namespace \"" + ns + "\" (must be *, ."
                    + (gateway ? "" : ", ~") + " or a DNS-1123 label)");
        }
        hostPart(v, host, gateway);
    }

    private static void hostPart(Validation v, String host, boolean gateway) {
        if (!host.equals("*") && !host.contains(".")) {
            v.error("host \"" + host + "\": short names (non FQDN) are not allowed");
        }
        String problem = wildcardDomainProblem(host);
        if (problem != null && !(gateway && isIp(host))) {
            v.error(problem);
        }
        report(v, partialWildcardProblem(host));
    }

    // ---- names, ports, protocols -------------------------------------------------------------

    /** Every protocol a port may name, as istiod prints them (pkg/config/protocol). */
    static final String PROTOCOL_LIST = Arrays.stream(Protocol.values()).filter(p -> p != Protocol.UNSUPPORTED)
            .map(Protocol::label).collect(Collectors.joining(", "));

    /** A port protocol; empty means "detect" and is allowed. */
    static boolean protocol(Validation v, String protocol) {
        if (!protocol.isEmpty() && Protocol.parse(protocol) == Protocol.UNSUPPORTED) {
            v.error("unsupported protocol \"" + protocol + "\" (known: " + PROTOCOL_LIST + ")");
            return false;
        }
        return true;
    }

    static boolean port(Validation v, long port) {
        return Checks.port(v, port);
    }

    static boolean portName(Validation v, String name) {
        return Checks.portName(v, name);
    }

    // ---- durations and percentages -----------------------------------------------------------

    static boolean duration(Validation v, Duration d) {
        return Checks.duration(v, d);
    }

    /** An integer percentage 0..100. */
    static boolean percent(Validation v, int p) {
        if (p < 0 || p > 100) {
            v.error("percentage " + p + " is not in the range 0..100");
            return false;
        }
        return true;
    }

    /** istiod's fractional percentage: 0, or 0.0001..100. */
    static boolean fractionalPercent(Validation v, double p) {
        if (Double.isNaN(p) || p < 0 || p > 100 || (p > 0 && p < 0.0001)) {
            v.error("percentage " + p + " must be 0 or in the range 0.0001..100");
            return false;
        }
        return true;
    }

    // ---- labels and selectors ----------------------------------------------------------------

    static boolean labels(Validation v, Map<String, String> labels) {
        return Checks.labels(v, labels);
    }

    /**
     * A workload selector's labels (istiod's validateWorkloadSelector): no empty keys, no
     * wildcards; an empty selector selects everything, which istiod only warns about.
     */
    static void workloadSelector(Validation v, Map<String, String> labels, String emptyWarning) {
        for (Map.Entry<String, String> e : labels.entrySet()) {
            if (e.getKey().isEmpty()) {
                v.error("empty label key is not supported in a selector (\"=" + e.getValue() + "\")");
            }
            if (e.getKey().contains("*") || e.getValue().contains("*")) {
                v.error("wildcards are not supported in a selector (\"" + e.getKey() + "=" + e.getValue() + "\")");
            }
        }
        if (labels.isEmpty()) {
            v.warn(emptyWarning);
        }
    }

    /**
     * exportTo as istiod checks it: ".", "*" or a namespace; "~" (no one) only on a
     * ServiceEntry and alone; "*" alone; no duplicates ("." counts as the own namespace); a
     * DestinationRule with a workload selector only to its own namespace.
     */
    static void exportTo(Validation v, String namespace, List<String> values, boolean serviceEntry,
                         boolean destinationRuleWithSelector) {
        if (values.isEmpty()) {
            return;
        }
        Set<String> seen = new HashSet<>();
        for (int i = 0; i < values.size(); i++) {
            String e = values.get(i);
            String key = e.equals(".") ? namespace : e;
            Validation at = v.at("[" + i + "]");
            if (seen.contains(key)) {
                at.error(key.equals(e) ? "duplicate exportTo entry \"" + e + "\""
                        : "duplicate exportTo entry: \".\" is the current namespace \"" + namespace + "\"");
                continue;
            }
            if (e.equals("~") && !serviceEntry) {
                at.error("exportTo \"~\" (no one) is only allowed on a ServiceEntry");
            } else if (!e.equals("~") && !e.equals("*") && !e.equals(".") && !isDnsLabel(e)) {
                at.error("exportTo entry \"" + e + "\" must be \".\", \"*\" or a namespace (DNS-1123 label)");
            } else {
                seen.add(key);
            }
        }
        if (destinationRuleWithSelector && !seen.isEmpty()) {
            if (!seen.contains(namespace)) {
                v.error("a DestinationRule with a workloadSelector cannot be exported beyond its own namespace");
            } else if (seen.size() > 1) {
                v.error("a DestinationRule with a workloadSelector can only be exported to its own namespace");
            }
        }
        if (seen.contains("*") && values.size() > 1) {
            v.error("\"*\" (public) cannot be combined with other exportTo values");
        }
        if (seen.contains("~") && values.size() > 1) {
            v.error("\"~\" (no one) cannot be combined with other exportTo values");
        }
    }

    // ---- headers -----------------------------------------------------------------------------

    static boolean isHeaderName(String name) {
        return HEADER_NAME.matcher(name).matches();
    }

    /** A header name to match on; {@code allowClaim} admits "@request.auth.claims.*" keys. */
    static boolean headerName(Validation v, String name, boolean allowClaim) {
        if (name.isEmpty()) {
            v.error("header name must not be empty");
            return false;
        }
        if (allowClaim && isJwtClaim(name)) {
            return true;
        }
        if (!isHeaderName(name)) {
            v.error("\"" + name + "\" is not a valid header name (letters, digits, '-' and '_' only)");
            return false;
        }
        return true;
    }

    static final String CLAIM_PREFIX = "@request.auth.claims";

    /** A JWT claim routing key: {@code @request.auth.claims.NAME} or {@code @request.auth.claims[NAME]...}. */
    static boolean isJwtClaim(String key) {
        if (!key.startsWith(CLAIM_PREFIX)) {
            return false;
        }
        String rest = key.substring(CLAIM_PREFIX.length());
        if (rest.startsWith(".")) {
            String claims = rest.substring(1);
            if (claims.isEmpty()) {
                return false;
            }
            for (String part : claims.split("\\.", -1)) {
                if (part.isEmpty()) {
                    return false;
                }
            }
            return true;
        }
        return rest.matches("(\\[[^\\[\\]]+\\])+");
    }

    static boolean isInternalHeader(String name) {
        return name.startsWith(":") || name.equalsIgnoreCase("host");
    }

    static boolean isAuthorityHeader(String name) {
        return name.equalsIgnoreCase(":authority") || name.equalsIgnoreCase("host");
    }

    /** A request header to set or add: not a pseudo header, except the authority. */
    static boolean requestHeaderOperationName(Validation v, String name) {
        if (name.isEmpty()) {
            v.error("header name must not be empty");
            return false;
        }
        if (isInternalHeader(name) && !isAuthorityHeader(name)) {
            v.error("header \"" + name + "\" cannot be modified (pseudo header)");
            return false;
        }
        return true;
    }

    /** A request header to remove, or a response header to modify: not Host, not a pseudo header. */
    static boolean headerOperationName(Validation v, String name) {
        if (name.isEmpty()) {
            v.error("header name must not be empty");
            return false;
        }
        if (name.equalsIgnoreCase("host")) {
            v.error("header \"" + name + "\" cannot be modified here (Host)");
            return false;
        }
        if (isInternalHeader(name)) {
            v.error("header \"" + name + "\" cannot be modified (pseudo header)");
            return false;
        }
        return true;
    }

    /**
     * A header value Envoy will accept: no control characters (tab aside), and every '%' either
     * doubled or opening a well-formed %VARIABLE% or %VARIABLE(args)% expression.
     */
    static boolean headerValue(Validation v, String value) {
        for (int i = 0; i < value.length(); i++) {
            char c = value.charAt(i);
            if ((c < 0x20 && c != '\t') || c == 0x7f) {
                v.error("header value contains a control character");
                return false;
            }
        }
        String problem = headerValueFormatProblem(value);
        return report(v, problem == null ? null : "invalid header value \"" + value + "\": " + problem);
    }

    private enum HeaderState { LITERAL, NAME, ARRAY, STRING_START, STRING, DELIMITER, ARGS_END, VAR_END }

    /** Walks a header value the way Envoy's header parser does; null when it is well formed. */
    static String headerValueFormatProblem(String s) {
        HeaderState state = HeaderState.LITERAL;
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            boolean more = i + 1 < s.length();
            switch (state) {
                case LITERAL -> {
                    if (c == '%') {
                        if (!more) {
                            return "a single '%' must be escaped as '%%'";
                        }
                        if (s.charAt(i + 1) == '%') {
                            i++;
                        } else {
                            state = HeaderState.NAME;
                        }
                    }
                }
                case NAME -> {
                    if (c == '%') {
                        state = HeaderState.LITERAL;
                    } else if (c == '(') {
                        state = HeaderState.ARRAY;
                    }
                }
                case ARRAY -> {
                    if (c == '[') {
                        state = HeaderState.STRING_START;
                    } else if (c != ' ') {
                        state = HeaderState.STRING;
                    }
                }
                case STRING_START -> {
                    if (c == '"') {
                        state = HeaderState.STRING;
                    } else if (c != ' ') {
                        return "expected '\"' to start an argument";
                    }
                }
                case STRING -> {
                    if (c == '\\') {
                        if (!more) {
                            return "unterminated backslash in an argument";
                        }
                        i++;
                    } else if (c == ')') {
                        state = HeaderState.VAR_END;
                    } else if (c == '"') {
                        state = HeaderState.DELIMITER;
                    }
                }
                case DELIMITER -> {
                    if (c == ',') {
                        state = HeaderState.STRING_START;
                    } else if (c == ']') {
                        state = HeaderState.ARGS_END;
                    } else if (c != ' ') {
                        return "expected ',' or ']' between arguments";
                    }
                }
                case ARGS_END -> {
                    if (c == ')') {
                        state = HeaderState.VAR_END;
                    } else if (c != ' ') {
                        return "expected ')' after the arguments";
                    }
                }
                case VAR_END -> {
                    if (c == '%') {
                        state = HeaderState.LITERAL;
                    } else if (c != ' ') {
                        return "expected '%' to close the variable";
                    }
                }
                default -> throw new IllegalStateException();
            }
        }
        return state == HeaderState.LITERAL ? null : "unterminated %VARIABLE% expression";
    }

    // ---- misc --------------------------------------------------------------------------------

    /** istiod's ValidateUnixAddress: an absolute file path, or an abstract socket "@name". */
    static boolean unixAddress(Validation v, String path) {
        if (path.isEmpty()) {
            v.error("unix socket address must not be empty");
            return false;
        }
        if (path.startsWith("@")) {
            return true;
        }
        if (!path.startsWith("/") || path.endsWith("/")) {
            v.error("\"" + path + "\" is not an absolute path to a file");
            return false;
        }
        return true;
    }

    /**
     * A regular expression Envoy's RE2 (and istiod's Go regexp) will compile: at most 1024
     * characters, compilable, and none of the constructs Java accepts but RE2 rejects
     * (lookaround, backreferences, atomic groups, possessive quantifiers, repeat counts above
     * 1000, flags other than i m s U, escapes such as \\Z \\G \\h \\R \\X \\k \\e \\c \\u).
     */
    static boolean regex(Validation v, String regex) {
        if (regex.isEmpty()) {
            v.error("regex must not be empty");
            return false;
        }
        if (regex.length() > MAX_REGEX_LENGTH) {
            v.error("regex is too large (" + regex.length() + " characters, at most " + MAX_REGEX_LENGTH + ")");
            return false;
        }
        String problem = re2Problem(regex);
        if (problem == null) {
            try {
                // RE2's (?P<name>...) is Java's (?<name>...)
                Pattern.compile(regex.replace("(?P<", "(?<"));
            } catch (PatternSyntaxException e) {
                problem = e.getDescription();
            }
        }
        if (problem != null) {
            v.error("invalid regex \"" + regex + "\": " + problem + " (RE2 syntax is expected)");
            return false;
        }
        return true;
    }

    static String re2Problem(String re) {
        boolean inClass = false;
        for (int i = 0; i < re.length(); i++) {
            char c = re.charAt(i);
            if (c == '\\') {
                if (i + 1 >= re.length()) {
                    return "trailing backslash";
                }
                char e = re.charAt(i + 1);
                if ("ZGhHRXkecuN".indexOf(e) >= 0) {
                    return "escape \\" + e + " is not supported";
                }
                if (e >= '1' && e <= '9') {
                    return "backreferences are not supported";
                }
                if (e == 'Q') {
                    int end = re.indexOf("\\E", i + 2);
                    i = end < 0 ? re.length() : end + 1;
                    continue;
                }
                i++;
                continue;
            }
            if (inClass) {
                if (c == ']') {
                    inClass = false;
                }
                continue;
            }
            switch (c) {
                case '[' -> {
                    inClass = true;
                    if (i + 1 < re.length() && re.charAt(i + 1) == '^') {
                        i++;
                    }
                    if (i + 1 < re.length() && re.charAt(i + 1) == ']') {
                        i++; // a ']' first in a class is a literal
                    }
                }
                case '(' -> {
                    if (re.startsWith("(?", i)) {
                        String p = groupProblem(re, i + 2);
                        if (p != null) {
                            return p;
                        }
                        i++; // the '?' is not a quantifier
                    }
                }
                case '*', '+', '?' -> {
                    if (i + 1 < re.length() && re.charAt(i + 1) == '+') {
                        return "possessive quantifiers are not supported";
                    }
                    if (i + 1 < re.length() && re.charAt(i + 1) == '?') {
                        i++; // lazy quantifier
                    }
                }
                case '{' -> {
                    int close = re.indexOf('}', i);
                    if (close > 0) {
                        String body = re.substring(i + 1, close);
                        if (body.matches("\\d+(,\\d*)?")) {
                            for (String n : body.split(",")) {
                                if (!n.isEmpty() && (n.length() > 4 || Integer.parseInt(n) > MAX_REPEAT)) {
                                    return "repeat count " + n + " exceeds " + MAX_REPEAT;
                                }
                            }
                            if (close + 1 < re.length() && re.charAt(close + 1) == '+') {
                                return "possessive quantifiers are not supported";
                            }
                            i = close;
                        }
                    }
                }
                default -> {
                }
            }
        }
        return null;
    }

    /** What follows "(?": a named group, or inline flags from i, m, s, U. */
    private static String groupProblem(String re, int at) {
        if (re.startsWith("P<", at) || (re.startsWith("<", at) && !re.startsWith("<=", at) && !re.startsWith("<!", at))) {
            return null;
        }
        if (re.startsWith("=", at) || re.startsWith("!", at) || re.startsWith("<=", at) || re.startsWith("<!", at)) {
            return "lookaround is not supported";
        }
        if (re.startsWith(">", at)) {
            return "atomic groups are not supported";
        }
        int i = at;
        while (i < re.length() && re.charAt(i) != ')' && re.charAt(i) != ':') {
            if ("imsU-".indexOf(re.charAt(i)) < 0) {
                return "flag '" + re.charAt(i) + "' is not supported (RE2 takes i, m, s, U)";
            }
            i++;
        }
        return null;
    }

    /** istiod rejects the dry-run annotation on every kind but AuthorizationPolicy. */
    static void metadata(Config config, Validation v) {
        if (config.annotations().containsKey("istio.io/dry-run")) {
            v.at("metadata").at("annotations").error("annotation istio.io/dry-run is only supported on "
                    + "AuthorizationPolicy; remove it");
        }
    }

    /** Adds an error at {@code v} when {@code problem} is not null; returns whether it was null. */
    static boolean report(Validation v, String problem) {
        if (problem != null) {
            v.error(problem);
            return false;
        }
        return true;
    }
}
