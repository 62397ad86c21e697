package io.meshpilot.networking.validation;

import com.google.protobuf.ByteString;
import com.google.protobuf.Descriptors.EnumValueDescriptor;
import com.google.protobuf.Descriptors.FieldDescriptor;
import com.google.protobuf.Message;
import com.google.protobuf.MessageOrBuilder;
import io.envoyproxy.pgv.validate.Validate.AnyRules;
import io.envoyproxy.pgv.validate.Validate.BytesRules;
import io.envoyproxy.pgv.validate.Validate.EnumRules;
import io.envoyproxy.pgv.validate.Validate.FieldRules;
import io.envoyproxy.pgv.validate.Validate.StringRules;
import io.meshpilot.util.IpAddr;
import io.meshpilot.util.IpSyntaxException;
import java.math.BigDecimal;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/** The PGV rules of one value (not lists or maps: {@link ProtoConstraints} does those), PGV's semantics. */
final class ValueRules {
    private static final Map<String, Pattern> PATTERNS = new ConcurrentHashMap<>();
    private static final Pattern BAD_PATTERN = Pattern.compile("(?!)");
    // PGV's own regexes (its generator's regex_map), "+-." range quirk included; with strict: false
    // both names and values use the one loose "header string" (empty allowed: min_len says otherwise)
    private static final Pattern HEADER_NAME = Pattern.compile("^:?[0-9a-zA-Z!#$%&'*+-.^_|~`]+$");
    private static final Pattern HEADER_VALUE = Pattern.compile("^[^\\u0000-\\u0008\\u000A-\\u001F\\u007F]*$");
    private static final Pattern HEADER_STRING = Pattern.compile("^[^\\u0000\\u000A\\u000D]*$");
    private static final Pattern UUID = Pattern.compile("^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$");

    private ValueRules() {
    }

    static void check(ProtoConstraints c, String path, FieldDescriptor f, FieldRules r, Object v) {
        switch (r.getTypeCase()) {
            case STRING -> string(c, path, r.getString(), (String) unwrap(v));
            case BYTES -> bytes(c, path, r.getBytes(), (ByteString) unwrap(v));
            case BOOL -> {
                if (r.getBool().hasConst()) {
                    c.evaluated("bool.const");
                    if ((Boolean) unwrap(v) != r.getBool().getConst()) {
                        c.violation(path, "bool.const " + r.getBool().getConst());
                    }
                }
            }
            case ENUM -> enumRules(c, path, r.getEnum(), (EnumValueDescriptor) v);
            case FLOAT -> ordered(c, path, "float", r.getFloat(), number(unwrapField(f, v), unwrap(v)));
            case DOUBLE -> ordered(c, path, "double", r.getDouble(), number(unwrapField(f, v), unwrap(v)));
            case INT32 -> ordered(c, path, "int32", r.getInt32(), number(unwrapField(f, v), unwrap(v)));
            case INT64 -> ordered(c, path, "int64", r.getInt64(), number(unwrapField(f, v), unwrap(v)));
            case UINT32 -> ordered(c, path, "uint32", r.getUint32(), number(unwrapField(f, v), unwrap(v)));
            case UINT64 -> ordered(c, path, "uint64", r.getUint64(), number(unwrapField(f, v), unwrap(v)));
            case SINT32 -> ordered(c, path, "sint32", r.getSint32(), number(unwrapField(f, v), unwrap(v)));
            case SINT64 -> ordered(c, path, "sint64", r.getSint64(), number(unwrapField(f, v), unwrap(v)));
            case FIXED32 -> ordered(c, path, "fixed32", r.getFixed32(), number(unwrapField(f, v), unwrap(v)));
            case FIXED64 -> ordered(c, path, "fixed64", r.getFixed64(), number(unwrapField(f, v), unwrap(v)));
            case SFIXED32 -> ordered(c, path, "sfixed32", r.getSfixed32(), number(unwrapField(f, v), unwrap(v)));
            case SFIXED64 -> ordered(c, path, "sfixed64", r.getSfixed64(), number(unwrapField(f, v), unwrap(v)));
            case DURATION -> ordered(c, path, "duration", r.getDuration(), seconds((MessageOrBuilder) v));
            case ANY -> any(c, path, r.getAny(), (MessageOrBuilder) v);
            case TIMESTAMP -> c.skipped("timestamp");
            default -> c.skipped(r.getTypeCase().name().toLowerCase() + " on a single value");
        }
    }

    /** Wrapper types ({@code UInt32Value}) carry the scalar rules of their {@code value}. */
    private static Object unwrap(Object v) {
        if (v instanceof MessageOrBuilder m) {
            FieldDescriptor value = m.getDescriptorForType().findFieldByName("value");
            return value == null ? v : m.getField(value);
        }
        return v;
    }

    private static FieldDescriptor unwrapField(FieldDescriptor f, Object v) {
        return v instanceof MessageOrBuilder m ? m.getDescriptorForType().findFieldByName("value") : f;
    }

    /** A numeric value or rule bound, unsigned types as unsigned; null for NaN. */
    static BigDecimal number(FieldDescriptor f, Object v) {
        return switch (v) {
            case Integer i -> f.getType() == FieldDescriptor.Type.UINT32 || f.getType() == FieldDescriptor.Type.FIXED32
                    ? BigDecimal.valueOf(Integer.toUnsignedLong(i)) : BigDecimal.valueOf(i);
            case Long l -> f.getType() == FieldDescriptor.Type.UINT64 || f.getType() == FieldDescriptor.Type.FIXED64
                    ? new BigDecimal(Long.toUnsignedString(l)) : BigDecimal.valueOf(l);
            case Number n when Double.isFinite(n.doubleValue()) -> new BigDecimal(n.toString());
            case MessageOrBuilder m -> seconds(m);
            default -> null;
        };
    }

    /** A google.protobuf.Duration (generated or dynamic) in seconds. */
    static BigDecimal seconds(MessageOrBuilder d) {
        long s = (Long) d.getField(d.getDescriptorForType().findFieldByName("seconds"));
        int n = (Integer) d.getField(d.getDescriptorForType().findFieldByName("nanos"));
        return BigDecimal.valueOf(s).add(BigDecimal.valueOf(n, 9));
    }

    /**
     * const, lt, lte, gt, gte, in, not_in of any numeric rules message or of DurationRules: they
     * all name these fields alike, so one reflective check does all thirteen. A lower bound above
     * the upper one means "outside the range", as in PGV.
     */
    private static void ordered(ProtoConstraints c, String path, String kind, Message rules, BigDecimal v) {
        if (v == null) {
            c.skipped(kind + " (not a finite number)");
            return;
        }
        var d = rules.getDescriptorForType();
        FieldDescriptor ignoreEmpty = d.findFieldByName("ignore_empty");
        if (ignoreEmpty != null && (Boolean) rules.getField(ignoreEmpty) && v.signum() == 0) {
            return;
        }
        String unit = kind.equals("duration") ? "s" : "";
        BigDecimal cst = bound(rules, "const");
        if (cst != null) {
            c.evaluated(kind + ".const");
            if (v.compareTo(cst) != 0) {
                c.violation(path, kind + ".const " + fmt(cst, unit) + " (got " + fmt(v, unit) + ")");
            }
        }
        String lowName = rules.hasField(d.findFieldByName("gt")) ? "gt" : rules.hasField(d.findFieldByName("gte")) ? "gte" : null;
        String upName = rules.hasField(d.findFieldByName("lt")) ? "lt" : rules.hasField(d.findFieldByName("lte")) ? "lte" : null;
        BigDecimal low = lowName == null ? null : bound(rules, lowName);
        BigDecimal up = upName == null ? null : bound(rules, upName);
        boolean lowOk = low == null || (lowName.equals("gt") ? v.compareTo(low) > 0 : v.compareTo(low) >= 0);
        boolean upOk = up == null || (upName.equals("lt") ? v.compareTo(up) < 0 : v.compareTo(up) <= 0);
        if (low != null && up != null && up.compareTo(low) < 0) {
            c.evaluated(kind + ".outside_range");
            if (!lowOk && !upOk) {
                c.violation(path, kind + "." + upName + " " + fmt(up, unit) + " or " + lowName + " " + fmt(low, unit)
                        + " (got " + fmt(v, unit) + ")");
            }
        } else {
            if (low != null) {
                c.evaluated(kind + "." + lowName);
                if (!lowOk) {
                    c.violation(path, kind + "." + lowName + " " + fmt(low, unit) + " (got " + fmt(v, unit) + ")");
                }
            }
            if (up != null) {
                c.evaluated(kind + "." + upName);
                if (!upOk) {
                    c.violation(path, kind + "." + upName + " " + fmt(up, unit) + " (got " + fmt(v, unit) + ")");
                }
            }
        }
        List<BigDecimal> in = bounds(rules, "in");
        if (!in.isEmpty()) {
            c.evaluated(kind + ".in");
            if (in.stream().noneMatch(b -> b.compareTo(v) == 0)) {
                c.violation(path, kind + ".in " + in + " (got " + fmt(v, unit) + ")");
            }
        }
        List<BigDecimal> notIn = bounds(rules, "not_in");
        if (!notIn.isEmpty()) {
            c.evaluated(kind + ".not_in");
            if (notIn.stream().anyMatch(b -> b.compareTo(v) == 0)) {
                c.violation(path, kind + ".not_in " + notIn + " (got " + fmt(v, unit) + ")");
            }
        }
    }

    private static BigDecimal bound(Message rules, String name) {
        FieldDescriptor f = rules.getDescriptorForType().findFieldByName(name);
        return f != null && rules.hasField(f) ? number(f, rules.getField(f)) : null;
    }

    private static List<BigDecimal> bounds(Message rules, String name) {
        FieldDescriptor f = rules.getDescriptorForType().findFieldByName(name);
        return f == null ? List.of() : ((List<?>) rules.getField(f)).stream().map(x -> number(f, x)).toList();
    }

    private static String fmt(BigDecimal v, String unit) {
        return v.stripTrailingZeros().toPlainString() + unit;
    }

    private static void string(ProtoConstraints c, String path, StringRules r, String s) {
        if (r.getIgnoreEmpty() && s.isEmpty()) {
            return;
        }
        int runes = s.codePointCount(0, s.length());
        int bytes = s.getBytes(StandardCharsets.UTF_8).length;
        check(c, path, r.hasConst(), "string.const", () -> s.equals(r.getConst()), "\"" + r.getConst() + "\"", s);
        check(c, path, r.hasLen(), "string.len", () -> runes == r.getLen(), r.getLen(), s);
        check(c, path, r.hasMinLen(), "string.min_len", () -> runes >= r.getMinLen(), r.getMinLen(), s);
        check(c, path, r.hasMaxLen(), "string.max_len", () -> runes <= r.getMaxLen(), r.getMaxLen(), s);
        check(c, path, r.hasLenBytes(), "string.len_bytes", () -> bytes == r.getLenBytes(), r.getLenBytes(), s);
        check(c, path, r.hasMinBytes(), "string.min_bytes", () -> bytes >= r.getMinBytes(), r.getMinBytes(), s);
        check(c, path, r.hasMaxBytes(), "string.max_bytes", () -> bytes <= r.getMaxBytes(), r.getMaxBytes(), s);
        check(c, path, r.hasPrefix(), "string.prefix", () -> s.startsWith(r.getPrefix()), "\"" + r.getPrefix() + "\"", s);
        check(c, path, r.hasSuffix(), "string.suffix", () -> s.endsWith(r.getSuffix()), "\"" + r.getSuffix() + "\"", s);
        check(c, path, r.hasContains(), "string.contains", () -> s.contains(r.getContains()), "\"" + r.getContains() + "\"", s);
        check(c, path, r.hasNotContains(), "string.not_contains", () -> !s.contains(r.getNotContains()),
                "\"" + r.getNotContains() + "\"", s);
        check(c, path, r.getInCount() > 0, "string.in", () -> r.getInList().contains(s), r.getInList(), s);
        check(c, path, r.getNotInCount() > 0, "string.not_in", () -> !r.getNotInList().contains(s), r.getNotInList(), s);
        if (r.hasPattern()) {
            Pattern p = PATTERNS.computeIfAbsent(r.getPattern(), ValueRules::compile);
            if (p == BAD_PATTERN) {
                c.skipped("string.pattern (RE2 only)");
            } else {
                check(c, path, true, "string.pattern", () -> p.matcher(s).find(), r.getPattern(), s);
            }
        }
        switch (r.getWellKnownCase()) {
            case HOSTNAME -> check(c, path, r.getHostname(), "string.hostname", () -> hostname(s), "", s);
            case IP -> check(c, path, r.getIp(), "string.ip", () -> ip(s), "", s);
            case IPV4 -> check(c, path, r.getIpv4(), "string.ipv4", () -> ipv4(s), "", s);
            case IPV6 -> check(c, path, r.getIpv6(), "string.ipv6", () -> ip(s) && !ipv4(s), "", s);
            case ADDRESS -> check(c, path, r.getAddress(), "string.address", () -> ip(s) || hostname(s), "", s);
            case URI -> check(c, path, r.getUri(), "string.uri", () -> uri(s, true), "", s);
            case URI_REF -> check(c, path, r.getUriRef(), "string.uri_ref", () -> uri(s, false), "", s);
            case UUID -> check(c, path, r.getUuid(), "string.uuid", () -> UUID.matcher(s).matches(), "", s);
            case EMAIL -> c.skipped("string.email");
            case WELL_KNOWN_REGEX -> {
                boolean strict = r.getStrict(); // proto2 default true
                Pattern p = switch (r.getWellKnownRegex()) {
                    case HTTP_HEADER_NAME -> strict ? HEADER_NAME : HEADER_STRING;
                    case HTTP_HEADER_VALUE -> strict ? HEADER_VALUE : HEADER_STRING;
                    default -> null;
                };
                if (p == null) {
                    c.skipped("string.well_known_regex " + r.getWellKnownRegex());
                } else {
                    check(c, path, true, "string.well_known_regex", () -> p.matcher(s).matches(),
                            r.getWellKnownRegex() + (strict ? "" : " (loose)"), s);
                }
            }
            default -> {
            }
        }
    }

    private static void check(ProtoConstraints c, String path, boolean present, String rule,
                              BooleanSupplier ok, Object bound, String got) {
        if (!present) {
            return;
        }
        c.evaluated(rule);
        if (!ok.getAsBoolean()) {
            String b = bound.toString();
            c.violation(path, rule + (b.isEmpty() ? "" : " " + b) + " (got \"" + abbreviate(got) + "\")");
        }
    }

    private static String abbreviate(String s) {
        return s.length() <= 80 ? s : s.substring(0, 77) + "...";
    }

    private static Pattern compile(String re) {
        try {
            return Pattern.compile(re);
        } catch (PatternSyntaxException e) {
            return BAD_PATTERN;
        }
    }

    /** PGV's IsHostname: at most 253 characters, labels of 1-63 letters, digits and inner hyphens. */
    static boolean hostname(String s) {
        String h = s.endsWith(".") ? s.substring(0, s.length() - 1) : s;
        if (h.isEmpty() || h.length() > 253) {
            return false;
        }
        for (String label : h.split("\\.", -1)) {
            if (label.isEmpty() || label.length() > 63 || label.startsWith("-") || label.endsWith("-")) {
                return false;
            }
            for (char ch : label.toCharArray()) {
                if (!(ch < 128 && (Character.isLetterOrDigit(ch) || ch == '-'))) {
                    return false;
                }
            }
        }
        return true;
    }

    /**
     * PGV's Go check, as go-control-plane's generated Validate() runs it in istiod: Go's
     * net.ParseIP, which reads netip's forms but refuses a zone ({@code fe80::1%eth0}).
     */
    static boolean ip(String s) {
        return netParseIp(s) != null;
    }

    /** PGV's ipv4: net.ParseIP(s).To4() != nil, which IPv4-mapped IPv6 ({@code ::ffff:1.2.3.4}) also passes. */
    private static boolean ipv4(String s) {
        IpAddr a = netParseIp(s);
        return a != null && (a.is4() || a.is4In6());
    }

    private static IpAddr netParseIp(String s) {
        try {
            IpAddr a = IpAddr.parse(s);
            return a.hasZone() ? null : a;
        } catch (IpSyntaxException e) {
            return null;
        }
    }

    private static boolean uri(String s, boolean absolute) {
        try {
            URI u = new URI(s);
            return !absolute || u.isAbsolute();
        } catch (URISyntaxException e) {
            return false;
        }
    }

    private static void bytes(ProtoConstraints c, String path, BytesRules r, ByteString b) {
        if (r.getIgnoreEmpty() && b.isEmpty()) {
            return;
        }
        String got = b.size() + " bytes";
        check(c, path, r.hasConst(), "bytes.const", () -> b.equals(r.getConst()), "", got);
        check(c, path, r.hasLen(), "bytes.len", () -> b.size() == r.getLen(), r.getLen(), got);
        check(c, path, r.hasMinLen(), "bytes.min_len", () -> b.size() >= r.getMinLen(), r.getMinLen(), got);
        check(c, path, r.hasMaxLen(), "bytes.max_len", () -> b.size() <= r.getMaxLen(), r.getMaxLen(), got);
        check(c, path, r.hasPrefix(), "bytes.prefix", () -> b.startsWith(r.getPrefix()), "", got);
        check(c, path, r.hasSuffix(), "bytes.suffix", () -> b.endsWith(r.getSuffix()), "", got);
        check(c, path, r.getInCount() > 0, "bytes.in", () -> r.getInList().contains(b), "", got);
        check(c, path, r.getNotInCount() > 0, "bytes.not_in", () -> !r.getNotInList().contains(b), "", got);
        if (r.hasPattern() || r.hasContains() || r.getWellKnownCase() != BytesRules.WellKnownCase.WELLKNOWN_NOT_SET) {
            c.skipped("bytes.pattern/contains/ip");
        }
    }

    private static void enumRules(ProtoConstraints c, String path, EnumRules r, EnumValueDescriptor v) {
        int n = v.getNumber();
        String got = " (got " + n + ")";
        if (r.hasConst()) {
            c.evaluated("enum.const");
            if (n != r.getConst()) {
                c.violation(path, "enum.const " + r.getConst() + got);
            }
        }
        if (r.getDefinedOnly()) {
            c.evaluated("enum.defined_only");
            if (v.getType().findValueByNumber(n) == null) {
                c.violation(path, "enum.defined_only " + v.getType().getName() + got);
            }
        }
        if (r.getInCount() > 0) {
            c.evaluated("enum.in");
            if (!r.getInList().contains(n)) {
                c.violation(path, "enum.in " + r.getInList() + got);
            }
        }
        if (r.getNotInCount() > 0) {
            c.evaluated("enum.not_in");
            if (r.getNotInList().contains(n)) {
                c.violation(path, "enum.not_in " + r.getNotInList() + got);
            }
        }
    }

    private static void any(ProtoConstraints c, String path, AnyRules r, MessageOrBuilder any) {
        if (!any.getDescriptorForType().getFullName().equals("google.protobuf.Any")) {
            // Envoy puts any rules on a message that is no Any (ExtensionConfigSource.config_source:
            // any.required); type URL rules cannot apply to it, only its presence
            c.skipped("any.on_non_any");
            return;
        }
        String url = (String) any.getField(any.getDescriptorForType().findFieldByName("type_url"));
        if (r.getInCount() > 0) {
            c.evaluated("any.in");
            if (!r.getInList().contains(url)) {
                c.violation(path, "any.in " + r.getInList() + " (got " + url + ")");
            }
        }
        if (r.getNotInCount() > 0) {
            c.evaluated("any.not_in");
            if (r.getNotInList().contains(url)) {
                c.violation(path, "any.not_in " + r.getNotInList() + " (got " + url + ")");
            }
        }
    }
}
