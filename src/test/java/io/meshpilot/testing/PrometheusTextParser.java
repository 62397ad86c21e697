package io.meshpilot.testing;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Pattern;

/**
 * A strict parser of the Prometheus text exposition format 0.0.4, following its written
 * rules: name and label syntax, escapes, one TYPE/HELP per family and before its samples,
 * families contiguous, no duplicate series, valid floats, histogram bucket rules, final
 * newline. Throws {@link IllegalArgumentException} naming the line on any violation.
 */
public final class PrometheusTextParser {
    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Set<String> TYPES = Set.of("counter", "gauge", "histogram", "summary", "untyped");

    /** One sample line. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    /** A family: its type and samples. */
    public record Family(String name, String type, String help, List<Sample> samples) {
    }

    private PrometheusTextParser() {
    }

    public static Map<String, Family> parse(String text) {
        if (!text.isEmpty() && !text.endsWith("\n")) {
            throw new IllegalArgumentException("exposition must end with a newline");
        }
        Map<String, String> types = new HashMap<>();
        Map<String, String> helps = new HashMap<>();
        Map<String, List<Sample>> samples = new LinkedHashMap<>();
        Set<String> closed = new HashSet<>();
        Set<String> series = new HashSet<>();
        String current = null;
        String[] lines = text.split("\n", -1);
        for (int i = 0; i < lines.length - 1; i++) {
            String line = lines[i];
            int n = i + 1;
            if (line.isBlank()) {
                continue;
            }
            if (line.startsWith("#")) {
                String[] parts = line.split(" ", 4);
                if (parts.length >= 3 && (parts[1].equals("TYPE") || parts[1].equals("HELP"))) {
                    String name = parts[2];
                    require(NAME.matcher(name).matches(), n, "bad metric name " + name);
                    if (parts[1].equals("TYPE")) {
                        require(parts.length == 4 && TYPES.contains(parts[3]), n, "bad TYPE line");
                        require(!types.containsKey(name), n, "second TYPE for " + name);
                        require(!samples.containsKey(name), n, "TYPE for " + name + " after its samples");
                        types.put(name, parts[3]);
                    } else {
                        require(!helps.containsKey(name), n, "second HELP for " + name);
                        helps.put(name, parts.length == 4 ? parts[3] : "");
                    }
                    current = switchFamily(current, name, closed, n);
                }
                continue;
            }
            Sample s = sample(line, n);
            String family = familyOf(s.name(), types);
            current = switchFamily(current, family, closed, n);
            String key = s.name() + new TreeMap<>(s.labels());
            require(series.add(key), n, "duplicate series " + key);
            String type = types.getOrDefault(family, "untyped");
            if (type.equals("counter")) {
                require(s.value() >= 0 || Double.isNaN(s.value()), n, "negative counter " + s.name());
            }
            if (type.equals("histogram") && s.name().endsWith("_bucket")) {
                require(s.labels().containsKey("le"), n, "histogram bucket without le");
            }
            samples.computeIfAbsent(family, k -> new ArrayList<>()).add(s);
        }
        Map<String, Family> out = new LinkedHashMap<>();
        samples.forEach((f, list) -> {
            String type = types.getOrDefault(f, "untyped");
            if (type.equals("histogram")) {
                checkHistogram(f, list);
            }
            out.put(f, new Family(f, type, helps.get(f), List.copyOf(list)));
        });
        return out;
    }

    private static String switchFamily(String current, String next, Set<String> closed, int n) {
        if (next.equals(current)) {
            return current;
        }
        require(!closed.contains(next), n, "family " + next + " is not contiguous");
        if (current != null) {
            closed.add(current);
        }
        return next;
    }

    private static String familyOf(String sampleName, Map<String, String> types) {
        for (String suffix : List.of("_bucket", "_sum", "_count")) {
            if (sampleName.endsWith(suffix)) {
                String base = sampleName.substring(0, sampleName.length() - suffix.length());
                String t = types.get(base);
                if ("histogram".equals(t) || "summary".equals(t)) {
                    return base;
                }
            }
        }
        return sampleName;
    }

    private static void checkHistogram(String family, List<Sample> list) {
        Map<Map<String, String>, List<Sample>> byLabels = new HashMap<>();
        for (Sample s : list) {
            if (s.name().endsWith("_bucket")) {
                Map<String, String> rest = new TreeMap<>(s.labels());
                rest.remove("le");
                byLabels.computeIfAbsent(rest, k -> new ArrayList<>()).add(s);
            }
        }
        byLabels.forEach((labels, buckets) -> {
            double prevLe = Double.NEGATIVE_INFINITY;
            double prevCount = 0;
            for (Sample b : buckets) {
                double le = parseFloat(b.labels().get("le"), 0);
                require(le > prevLe, 0, family + " buckets not ascending");
                require(b.value() >= prevCount, 0, family + " buckets not cumulative");
                prevLe = le;
                prevCount = b.value();
            }
            require(prevLe == Double.POSITIVE_INFINITY, 0, family + " has no +Inf bucket");
        });
    }

    private static Sample sample(String line, int n) {
        int i = 0;
        while (i < line.length() && line.charAt(i) != '{' && line.charAt(i) != ' ') {
            i++;
        }
        String name = line.substring(0, i);
        require(NAME.matcher(name).matches(), n, "bad metric name '" + name + "'");
        Map<String, String> labels = new LinkedHashMap<>();
        if (i < line.length() && line.charAt(i) == '{') {
            i++;
            while (true) {
                require(i < line.length(), n, "unterminated label set");
                if (line.charAt(i) == '}') {
                    i++;
                    break;
                }
                int eq = line.indexOf('=', i);
                require(eq > i, n, "label without '='");
                String label = line.substring(i, eq);
                require(LABEL.matcher(label).matches(), n, "bad label name '" + label + "'");
                require(eq + 1 < line.length() && line.charAt(eq + 1) == '"', n, "label value must be quoted");
                StringBuilder value = new StringBuilder();
                int j = eq + 2;
                while (true) {
                    require(j < line.length(), n, "unterminated label value");
                    char c = line.charAt(j);
                    if (c == '\\') {
                        require(j + 1 < line.length(), n, "dangling escape");
                        char e = line.charAt(j + 1);
                        require(e == '\\' || e == '"' || e == 'n', n, "bad escape \\" + e);
                        value.append(e == 'n' ? '\n' : e);
                        j += 2;
                    } else if (c == '"') {
                        j++;
                        break;
                    } else {
                        value.append(c);
                        j++;
                    }
                }
                require(labels.put(label, value.toString()) == null, n, "duplicate label " + label);
                i = j;
                if (i < line.length() && line.charAt(i) == ',') {
                    i++;
                }
            }
        }
        require(i < line.length() && line.charAt(i) == ' ', n, "missing space before value");
        String[] rest = line.substring(i + 1).trim().split(" ");
        require(rest.length == 1 || rest.length == 2, n, "expected value [timestamp]");
        double v = parseFloat(rest[0], n);
        if (rest.length == 2) {
            try {
                Long.parseLong(rest[1]);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("line " + n + ": bad timestamp " + rest[1]);
            }
        }
        return new Sample(name, labels, v);
    }

    private static double parseFloat(String s, int n) {
        switch (s) {
            case "NaN":
                return Double.NaN;
            case "+Inf":
                return Double.POSITIVE_INFINITY;
            case "-Inf":
                return Double.NEGATIVE_INFINITY;
            default:
                require(s.matches("[-+]?(\\d+\\.?\\d*|\\.\\d+)([eE][-+]?\\d+)?"), n, "bad float '" + s + "'");
                return Double.parseDouble(s);
        }
    }

    private static void require(boolean ok, int line, String message) {
        if (!ok) {
            throw new IllegalArgumentException((line > 0 ? "line " + line + ": " : "") + message);
        }
    }
}
