package io.meshpilot.config.validation;

import com.google.protobuf.Duration;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpPrefix;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * istiod's building-block checks (pkg/config/validation, pkg/config/labels): DNS names with
 * and without wildcards, labels, ports, durations, IPs and CIDRs, exportTo values. Each
 * reports into a {@link Validation} view and returns whether the value passed.
 */
public final class Checks {
    private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern WILDCARD_LABEL = Pattern.compile("\\*|(\\*|\\*-)?[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    /** Kubernetes label keys: optional DNS-subdomain prefix, then a name of at most 63 chars. */
    private static final Pattern LABEL_NAME = Pattern.compile("([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]");
    private static final Pattern LABEL_VALUE = Pattern.compile("(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?");
    private static final Pattern PORT_NAME = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

    private Checks() {
    }

    public static boolean isDns1123Label(String s) {
        return s != null && s.length() <= 63 && DNS1123_LABEL.matcher(s).matches();
    }

    /** A fully qualified or short DNS name (labels of DNS-1123, at most 255 chars, lower case). */
    public static boolean fqdn(Validation v, String host) {
        if (!preconditions(v, host)) {
            return false;
        }
        return labels(v, host, host);
    }

    private static boolean preconditions(Validation v, String host) {
        if (host == null || host.isEmpty()) {
            v.error("must not be empty");
            return false;
        }
        if (host.length() > 255) {
            v.error("domain name \"" + host + "\" is longer than 255 characters");
            return false;
        }
        return true;
    }

    private static boolean labels(Validation v, String host, String part) {
        String p = part.endsWith(".") ? part.substring(0, part.length() - 1) : part;
        if (p.isEmpty()) {
            v.error("domain name \"" + host + "\" is empty");
            return false;
        }
        for (String label : p.split("\\.", -1)) {
            if (!isDns1123Label(label)) {
                v.error("domain name \"" + host + "\" invalid (label \"" + label + "\" invalid)");
                return false;
            }
        }
        return true;
    }

    /** A host that may start with a wildcard label ({@code *}, {@code *.example.com}, {@code *foo.com}). */
    public static boolean wildcardDomain(Validation v, String host) {
        if (!preconditions(v, host)) {
            return false;
        }
        String[] parts = host.split("\\.", 2);
        if (parts[0].length() > 63 || !WILDCARD_LABEL.matcher(parts[0]).matches()) {
            v.error("domain name \"" + host + "\" invalid (label \"" + parts[0] + "\" invalid)");
            return false;
        }
        return parts.length == 1 || labels(v, host, parts[1]);
    }

    /** A wildcard domain, or an IP address. */
    public static boolean wildcardDomainOrIp(Validation v, String host) {
        if (isIp(host)) {
            return true;
        }
        return wildcardDomain(v, host);
    }

    /** An IP address as istiod reads one (Go's netip.ParseAddr); never a name lookup. */
    public static boolean isIp(String s) {
        return s != null && IpAddr.isAddress(s);
    }

    /**
     * Why {@code s} is neither an IP address nor a CIDR block, or null: istiod's
     * ValidateIPSubnet (netip.ParsePrefix when there is exactly one "/", else netip.ParseAddr).
     */
    public static String ipOrCidrProblem(String s) {
        if (IpPrefix.looksLikePrefix(s)) {
            String why = IpPrefix.problem(s);
            return why == null ? null : "\"" + s + "\" is not a valid CIDR block: " + why;
        }
        String why = IpAddr.problem(s);
        return why == null ? null : "\"" + s + "\" is not a valid IP address: " + why;
    }

    /** An IP address or a CIDR block ({@code 10.0.0.0/8}, {@code 2001:db8::/32}). */
    public static boolean ipOrCidr(Validation v, String s) {
        if (s == null || s.isEmpty()) {
            v.error("must not be empty");
            return false;
        }
        String why = ipOrCidrProblem(s);
        if (why != null) {
            v.error(why);
            return false;
        }
        return true;
    }

    /** A port number 1-65535. */
    public static boolean port(Validation v, long port) {
        if (port < 1 || port > 65535) {
            v.error("port number " + port + " must be in the range 1..65535");
            return false;
        }
        return true;
    }

    /** A port name: DNS-1123 label. */
    public static boolean portName(Validation v, String name) {
        if (name == null || name.isEmpty() || name.length() > 63 || !PORT_NAME.matcher(name).matches()) {
            v.error("invalid port name \"" + name + "\" (must be a DNS-1123 label)");
            return false;
        }
        return true;
    }

    /** istiod's ValidateDuration: at least 1ms, millisecond precision. */
    public static boolean duration(Validation v, Duration d) {
        long nanos = d.getSeconds() * 1_000_000_000L + d.getNanos();
        if (nanos < 1_000_000) {
            v.error("duration must be greater than 1ms");
            return false;
        }
        if (d.getNanos() % 1_000_000 != 0) {
            v.error("only durations to ms precision are supported");
            return false;
        }
        return true;
    }

    /** A duration that may be zero (e.g. a timeout of 0s meaning "none"), else as {@link #duration}. */
    public static boolean durationOrZero(Validation v, Duration d) {
        if (d.getSeconds() == 0 && d.getNanos() == 0) {
            return true;
        }
        if (d.getSeconds() < 0 || d.getNanos() < 0) {
            v.error("duration must not be negative");
            return false;
        }
        return duration(v, d);
    }

    /** A percentage 0-100. */
    public static boolean percent(Validation v, double p) {
        if (p < 0 || p > 100 || Double.isNaN(p)) {
            v.error("percentage " + p + " must be in the range 0..100");
            return false;
        }
        return true;
    }

    /** Kubernetes label keys and values (selectors, workload labels). */
    public static boolean labels(Validation v, Map<String, String> labels) {
        boolean ok = true;
        for (Map.Entry<String, String> e : labels.entrySet()) {
            if (!labelKey(e.getKey())) {
                v.error("invalid label key \"" + e.getKey() + "\"");
                ok = false;
            }
            String value = e.getValue();
            if (value.length() > 63 || !LABEL_VALUE.matcher(value).matches()) {
                v.error("invalid label value \"" + value + "\" for key \"" + e.getKey() + "\"");
                ok = false;
            }
        }
        return ok;
    }

    private static boolean labelKey(String key) {
        String name = key;
        int slash = key.indexOf('/');
        if (slash >= 0) {
            String prefix = key.substring(0, slash);
            name = key.substring(slash + 1);
            if (prefix.isEmpty() || prefix.length() > 253) {
                return false;
            }
            for (String label : prefix.split("\\.", -1)) {
                if (!isDns1123Label(label)) {
                    return false;
                }
            }
        }
        return !name.isEmpty() && name.length() <= 63 && LABEL_NAME.matcher(name).matches();
    }

    /** exportTo values: "*", ".", "~" (none) or a namespace; "~" cannot be combined. */
    public static boolean exportTo(Validation v, List<String> values) {
        boolean ok = true;
        for (int i = 0; i < values.size(); i++) {
            String e = values.get(i);
            if (!e.equals("*") && !e.equals(".") && !e.equals("~") && !isDns1123Label(e)) {
                v.at("[" + i + "]").error("\"" + e + "\" must be \"*\", \".\", \"~\" or a namespace name");
                ok = false;
            }
        }
        if (values.contains("~") && values.size() > 1) {
            v.error("\"~\" (export to none) cannot be combined with other values");
            ok = false;
        }
        if (values.contains("*") && values.size() > 1) {
            v.error("\"*\" (export to all) cannot be combined with other values");
            ok = false;
        }
        return ok;
    }

    /** A regular expression Envoy will compile (RE2 is a subset of what Java accepts). */
    public static boolean regex(Validation v, String regex) {
        if (regex.isEmpty()) {
            v.error("regex must not be empty");
            return false;
        }
        try {
            Pattern.compile(regex);
        } catch (PatternSyntaxException e) {
            v.error("invalid regex \"" + regex + "\": " + e.getDescription());
            return false;
        }
        if (regex.contains("(?<") || regex.contains("(?=") || regex.contains("(?!") || regex.contains("(?<=")
                || regex.matches(".*\\\\[1-9].*")) {
            v.error("regex \"" + regex + "\" uses lookaround or backreferences, which Envoy's RE2 does not support");
            return false;
        }
        return true;
    }
}
