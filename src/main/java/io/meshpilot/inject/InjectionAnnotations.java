package io.meshpilot.inject;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.Function;

/**
 * The pod annotations istiod checks before injecting (pkg/kube/inject/validate.go): a pod
 * with a malformed one is refused with every bad annotation named, as istiod refuses it.
 */
final class InjectionAnnotations {
    /** Each checked annotation and its check: null when the value is fine, else why not. */
    private static final Map<String, Function<String, String>> CHECKS = new TreeMap<>(Map.ofEntries(
            Map.entry("sidecar.istio.io/interceptionMode", InjectionAnnotations::interceptionMode),
            Map.entry("status.sidecar.istio.io/port", v -> port(v) == null ? null : "invalid port: " + port(v)),
            Map.entry("readiness.status.sidecar.istio.io/initialDelaySeconds", InjectionAnnotations::uint32),
            Map.entry("readiness.status.sidecar.istio.io/periodSeconds", InjectionAnnotations::uint32),
            Map.entry("readiness.status.sidecar.istio.io/failureThreshold", InjectionAnnotations::uint32),
            // the parameter names in the messages are istiod's (its validate.go)
            Map.entry("traffic.sidecar.istio.io/includeOutboundIPRanges",
                    v -> v.equals("*") ? null : invalid("includeIPRanges", cidrs(v))),
            Map.entry("traffic.sidecar.istio.io/excludeOutboundIPRanges", v -> invalid("excludeIPRanges", cidrs(v))),
            Map.entry("traffic.sidecar.istio.io/includeInboundPorts",
                    v -> v.equals("*") ? null : invalid("includeInboundPorts", ports(v))),
            Map.entry("traffic.sidecar.istio.io/excludeInboundPorts", v -> invalid("excludeInboundPorts", ports(v))),
            Map.entry("traffic.sidecar.istio.io/excludeOutboundPorts", v -> invalid("excludeOutboundPorts", ports(v))),
            Map.entry("traffic.sidecar.istio.io/excludeInterfaces", InjectionAnnotations::interfaces),
            Map.entry("traffic.sidecar.istio.io/kubevirtInterfaces", InjectionAnnotations::interfaces),
            Map.entry("istio.io/reroute-virtual-interfaces", InjectionAnnotations::interfaces),
            Map.entry("prometheus.istio.io/merge-metrics", InjectionAnnotations::bool),
            Map.entry("sidecar.istio.io/proxyCPU", InjectionAnnotations::quantity),
            Map.entry("sidecar.istio.io/proxyMemory", InjectionAnnotations::quantity),
            Map.entry("sidecar.istio.io/proxyCPULimit", InjectionAnnotations::quantity),
            Map.entry("sidecar.istio.io/proxyMemoryLimit", InjectionAnnotations::quantity)));

    private InjectionAnnotations() {
    }

    /** @throws IllegalArgumentException naming each bad annotation, its value and why */
    static void check(Map<String, String> annotations) {
        List<String> bad = new ArrayList<>();
        CHECKS.forEach((name, check) -> {
            String value = annotations.get(name);
            if (value != null) {
                String why = check.apply(value);
                if (why != null) {
                    bad.add("invalid value '" + value + "' for annotation '" + name + "': " + why);
                }
            }
        });
        if (!bad.isEmpty()) {
            throw new IllegalArgumentException(String.join("; ", bad));
        }
    }

    private static String interceptionMode(String v) {
        return v.equals("REDIRECT") || v.equals("TPROXY") || v.equals("NONE") ? null
                : "interceptionMode invalid, use REDIRECT,TPROXY,NONE: " + v;
    }

    private static String port(String v) {
        try {
            int p = Integer.parseInt(v.trim());
            return p >= 0 && p <= 65535 ? null : "'" + v + "' is not 0-65535";
        } catch (NumberFormatException e) {
            return "failed parsing port '" + v + "'";
        }
    }

    private static String ports(String v) {
        if (v.trim().isEmpty()) {
            return null;
        }
        for (String p : v.trim().split(",")) {
            String why = port(p);
            if (why != null) {
                return why;
            }
        }
        return null;
    }

    private static String invalid(String parameter, String why) {
        return why == null ? null : parameter + " invalid: " + why;
    }

    private static String cidrs(String v) {
        if (v.isEmpty()) {
            return null;
        }
        for (String c : v.split(",")) {
            if (!cidr(c)) {
                return "failed parsing cidr '" + c + "'";
            }
        }
        return null;
    }

    /** An address prefix as Go's netip.ParsePrefix takes it: address/bits, no spaces. */
    private static boolean cidr(String c) {
        int slash = c.indexOf('/');
        if (slash < 0 || !c.equals(c.strip())) {
            return false;
        }
        String address = c.substring(0, slash);
        int bits;
        try {
            bits = Integer.parseInt(c.substring(slash + 1));
        } catch (NumberFormatException e) {
            return false;
        }
        if (address.matches("[0-9.]+")) {
            String[] octets = address.split("\\.", -1);
            if (octets.length != 4) {
                return false;
            }
            for (String o : octets) {
                if (o.isEmpty() || o.length() > 3 || Integer.parseInt(o) > 255 || (o.length() > 1 && o.startsWith("0"))) {
                    return false;
                }
            }
            return bits >= 0 && bits <= 32;
        }
        if (address.contains(":") && address.matches("[0-9a-fA-F:.]+")) {
            try {
                // a literal with ':' is parsed, never looked up
                return InetAddress.getByName(address) instanceof Inet6Address && bits >= 0 && bits <= 128;
            } catch (UnknownHostException e) {
                return false;
            }
        }
        return false;
    }

    private static String uint32(String v) {
        try {
            long n = Long.parseLong(v);
            return n >= 0 && n <= 0xFFFFFFFFL ? null : "out of range";
        } catch (NumberFormatException e) {
            return "not a number";
        }
    }

    private static String bool(String v) {
        return switch (v) {
            case "1", "t", "T", "TRUE", "true", "True", "0", "f", "F", "FALSE", "false", "False" -> null;
            default -> "not a boolean";
        };
    }

    private static String quantity(String v) {
        if (v.chars().anyMatch(Character::isISOControl)) {
            return "value contains control characters";
        }
        return v.matches("[+-]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E|[eE][+-]?[0-9]+)?") ? null
                : "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
    }

    /** Linux interface names: 1-15 characters, no '/', whitespace or ':'. */
    private static String interfaces(String v) {
        for (String name : v.split(",")) {
            String n = name.trim();
            if (n.isEmpty() || n.length() > 15 || n.contains("/") || n.contains(":") || n.chars().anyMatch(Character::isWhitespace)) {
                return "invalid interface name '" + name + "'";
            }
        }
        return null;
    }
}
