package io.meshpilot.chart;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.cli.DiscoveryCommand;
import io.meshpilot.cli.Main;
import io.meshpilot.features.EnvironmentUsage;
import io.meshpilot.testing.ServerProcess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;
import picocli.CommandLine.Model.OptionSpec;

/**
 * No istiod setting ignored in silence (issue 32, point 4): every Helm value of istiod's
 * {@code istio-discovery} chart, every flag of {@code pilot-discovery discovery} and every
 * environment variable istiod registers is either honoured by MeshPilot or warned about by
 * name, never both.
 *
 * <p>Inputs, from istio/istio at 86c9f01fd73: {@code istiod-settings/istio-discovery-values.yaml}
 * (manifests/charts/istio-control/istio-discovery/values.yaml, unchanged: its
 * {@code _internal_defaults_do_not_set} leaves), {@code istiod-settings/istiod-flags.txt}
 * (cmd.go addFlags and the log, ControlZ and keepalive options) and the environment list the
 * server ships ({@code features/istiod-environment.txt}).
 *
 * <p>Honoured values: read by a chart template ({@code .Values.<path>}, or a parent used whole
 * such as {@code toYaml .Values.resources}, or {@code dig} over a parent) or by the injector
 * (a {@code "<path>"} it looks up). Warned values: in the chart's {@code meshpilot.unsupportedValues}
 * or {@code meshpilot.partialValues}, checked to be named in {@code helm template}'s warning
 * when set.
 */
class IstiodSettingsCoverageTest {
    private static final Path HOME = ServerProcess.home();
    private static final Path VALUES = HOME.resolve("src/test/resources/istiod-settings/istio-discovery-values.yaml");
    private static final Path FLAGS = HOME.resolve("src/test/resources/istiod-settings/istiod-flags.txt");

    /**
     * Values istiod's templates read that its values.yaml does not list (defaults in the
     * templates): deployment.yaml's trustBundleName, configmap.yaml's proxy variant.
     */
    static final Set<String> TEMPLATE_ONLY_VALUES = Set.of("global.trustBundleName", "global.proxy.variant");

    /** Parents the chart hands over whole to the injector's values: only what the injector reads counts. */
    private static final Set<String> PASSED_WHOLE = Set.of("global", "pilot", "sidecarInjectorWebhook", "gateways");

    private static final Pattern VALUES_REF = Pattern.compile("\\.Values((?:\\.[A-Za-z0-9_]+)+)");
    private static final Pattern DIG = Pattern.compile("dig((?:\\s+\"[A-Za-z0-9_]+\")+)\\s+\\S+\\s+\\.Values((?:\\.[A-Za-z0-9_]+)*)");
    private static final Pattern QUOTED_PATH = Pattern.compile("\"([A-Za-z][A-Za-z0-9_]*(?:\\.[A-Za-z0-9_]+)+)\"");
    private static final Pattern DICT_KEY = Pattern.compile("^\\s*\"([A-Za-z0-9_.]+)\"\\s", Pattern.MULTILINE);

    @Test
    void everyIstiodValueIsHonouredOrWarnedNeverBoth() throws Exception {
        Set<String> leaves = istiodValueLeaves();
        Set<String> read = chartReferences();
        read.addAll(injectorReferences());
        leaves.addAll(TEMPLATE_ONLY_VALUES);
        Set<String> unsupported = listed("meshpilot.unsupportedValues");
        Set<String> partial = listed("meshpilot.partialValues");

        List<String> neither = new ArrayList<>();
        List<String> both = new ArrayList<>();
        for (String leaf : leaves) {
            boolean honoured = read.stream().anyMatch(r -> covers(r, leaf));
            boolean ignored = unsupported.stream().anyMatch(w -> w.equals(leaf) || leaf.startsWith(w + "."));
            boolean warns = ignored || partial.contains(leaf);
            if (honoured && ignored) {
                both.add(leaf);
            } else if (!honoured && !warns) {
                neither.add(leaf);
            }
            if (partial.contains(leaf)) {
                assertTrue(honoured, leaf + " is listed as applied in part, yet nothing reads it: list it as unsupported");
            }
        }
        assertEquals(Map.of("neither honoured nor warned", List.of(), "both honoured and warned", List.of()),
                Map.of("neither honoured nor warned", neither, "both honoured and warned", both));
        assertTrue(leaves.size() > 100, "istiod's values were read: " + leaves.size());
    }

    @Test
    void helmTemplateNamesEveryWarnedValueThatIsSet(@TempDir Path dir) throws Exception {
        Map<String, Object> defaults = internalDefaults();
        Map<String, Object> values = new LinkedHashMap<>();
        Set<String> warned = warnedValues();
        for (String path : warned) {
            Object dflt = at(defaults, path);
            put(values, path, changed(dflt));
        }
        Path file = dir.resolve("values.yaml");
        Files.writeString(file, new Yaml().dump(values));
        String text = HelmChart.template(file);
        List<String> silent = new ArrayList<>();
        for (String path : warned) {
            if (!Pattern.compile("(?m)^#\\s+" + Pattern.quote(path) + "=").matcher(text).find()) {
                silent.add(path);
            }
        }
        assertEquals(List.of(), silent, "set, yet not named by helm template's warning:\n" + text.lines()
                .filter(l -> l.startsWith("#")).reduce("", (a, b) -> a + b + "\n"));
    }

    @Test
    void globalVariantIsTheProxiesImageTypeAsInIstiodsMeshConfig(@TempDir Path dir) throws Exception {
        Path file = Files.writeString(dir.resolve("values.yaml"), "global: {variant: distroless}\n");
        HelmChart.Rendered r = HelmChart.render(file);
        Object mesh = HelmChart.yaml((String) Yamls.at(r.get("ConfigMap", "istio"), "data.mesh"));
        assertEquals("distroless", Yamls.at(mesh, "defaultConfig.image.imageType"));
        assertTrue(!r.text().contains("global.variant="), "honoured, not warned");

        Path proxyVariant = Files.writeString(dir.resolve("proxy.yaml"),
                "global: {variant: distroless, proxy: {variant: debug}}\n");
        Object meshWithProxyVariant = HelmChart.yaml((String) Yamls.at(HelmChart.render(proxyVariant)
                .get("ConfigMap", "istio"), "data.mesh"));
        assertEquals("debug", Yamls.at(meshWithProxyVariant, "defaultConfig.image.imageType"));
    }

    @Test
    void everyIstiodFlagIsAnOptionAndTheNotAppliedOnesAreWarned() throws IOException {
        Set<String> options = new TreeSet<>();
        for (OptionSpec o : Main.commandLine().getSubcommands().get("discovery").getCommandSpec().options()) {
            for (String name : o.names()) {
                options.add(name.replaceFirst("^-+", ""));
            }
        }
        List<String> unknown = new ArrayList<>();
        for (String flag : lines(FLAGS)) {
            if (!options.contains(flag)) {
                unknown.add(flag);
            }
        }
        assertEquals(List.of(), unknown, "istiod flags that would be 'unknown' here");
        for (String notApplied : DiscoveryCommand.READ_NOT_APPLIED) {
            assertTrue(lines(FLAGS).contains(notApplied.replaceFirst("^-+", "")), notApplied + " is istiod's");
        }
    }

    @Test
    void everyIstiodVariableIsReadOrNamedInTheStartupWarning() {
        Set<String> istiod = EnvironmentUsage.ofIstiod(n -> null).istiodNames();
        Map<String, String> env = new HashMap<>();
        // set every variable start-up does not read: each must come back in the warning, by name
        Set<String> asked = new TreeSet<>();
        Main.parseDiscoveryArgs(new String[0], name -> {
            asked.add(name);
            return null;
        });
        for (String name : istiod) {
            if (!asked.contains(name)) {
                env.put(name, "x");
            }
        }
        EnvironmentUsage usage = EnvironmentUsage.ofIstiod(env::get);
        Main.parseDiscoveryArgs(new String[0], usage);
        Set<String> named = new TreeSet<>();
        usage.unsupported().forEach(u -> named.add(u.name()));
        assertEquals(new TreeSet<>(env.keySet()), named);
        assertTrue(asked.contains("PILOT_TRACE_SAMPLING"), "the chart sets it on every install: honoured");
        assertTrue(asked.contains("ENABLE_CA_SERVER"), "the istio-csr switch: honoured");
    }

    /** Whether reading {@code ref} reads {@code leaf}: the same path, a parent used whole, or a part of a map leaf. */
    private static boolean covers(String ref, String leaf) {
        return ref.equals(leaf) || (leaf.startsWith(ref + ".") && !PASSED_WHOLE.contains(ref))
                || ref.startsWith(leaf + ".");
    }

    private static Set<String> chartReferences() throws IOException {
        Set<String> refs = new TreeSet<>();
        try (Stream<Path> files = Files.list(HOME.resolve("chart/templates"))) {
            for (Path f : files.toList()) {
                String text = Files.readString(f);
                Matcher m = VALUES_REF.matcher(text);
                while (m.find()) {
                    addWithPilotAlias(refs, m.group(1).substring(1));
                }
                Matcher d = DIG.matcher(text);
                while (d.find()) {
                    String keys = String.join(".", d.group(1).trim().replace("\"", "").split("\\s+"));
                    String parent = d.group(2).isEmpty() ? "" : d.group(2).substring(1) + ".";
                    addWithPilotAlias(refs, parent + keys);
                }
            }
        }
        return refs;
    }

    /** The chart merges {@code .Values.pilot} over {@code .Values}, as istiod's does: pilot.x is x. */
    private static void addWithPilotAlias(Set<String> refs, String path) {
        refs.add(path);
        if (path.startsWith("pilot.")) {
            refs.add(path.substring("pilot.".length()));
        }
    }

    private static Set<String> injectorReferences() throws IOException {
        Set<String> refs = new TreeSet<>();
        try (Stream<Path> files = Files.walk(HOME.resolve("src/main/java/io/meshpilot/inject"))) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                Matcher m = QUOTED_PATH.matcher(Files.readString(f));
                while (m.find()) {
                    addWithPilotAlias(refs, m.group(1));
                }
            }
        }
        return refs;
    }

    /** The keys of the chart's lists of values it does not (or only partly) support. */
    static Set<String> warnedValues() throws IOException {
        Set<String> warned = listed("meshpilot.unsupportedValues");
        warned.addAll(listed("meshpilot.partialValues"));
        return warned;
    }

    /** The keys of the dict in the chart helper {@code define}. */
    private static Set<String> listed(String define) throws IOException {
        String helpers = Files.readString(HOME.resolve("chart/templates/_helpers.tpl"));
        int start = helpers.indexOf("{{- define \"" + define + "\"");
        assertTrue(start >= 0, define + " is defined");
        int dict = helpers.indexOf("dict", start);
        Set<String> keys = new TreeSet<>();
        Matcher m = DICT_KEY.matcher(helpers.substring(dict, helpers.indexOf("-}}", dict)));
        while (m.find()) {
            keys.add(m.group(1));
        }
        return keys;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> internalDefaults() throws IOException {
        Map<String, Object> root = (Map<String, Object>) HelmChart.yaml(Files.readString(VALUES));
        return (Map<String, Object>) root.get("_internal_defaults_do_not_set");
    }

    private static Set<String> istiodValueLeaves() throws IOException {
        Set<String> leaves = new TreeSet<>();
        collect("", internalDefaults(), leaves);
        return leaves;
    }

    @SuppressWarnings("unchecked")
    private static void collect(String prefix, Map<String, Object> map, Set<String> out) {
        map.forEach((k, v) -> {
            String path = prefix.isEmpty() ? k : prefix + "." + k;
            if (v instanceof Map<?, ?> m && !m.isEmpty()) {
                collect(path, (Map<String, Object>) m, out);
            } else {
                out.add(path);
            }
        });
    }

    @SuppressWarnings("unchecked")
    private static Object at(Map<String, Object> map, String path) {
        Object v = map;
        for (String k : path.split("\\.")) {
            v = v instanceof Map<?, ?> m ? ((Map<String, Object>) m).get(k) : null;
        }
        return v;
    }

    @SuppressWarnings("unchecked")
    private static void put(Map<String, Object> map, String path, Object value) {
        String[] keys = path.split("\\.");
        Map<String, Object> m = map;
        for (int i = 0; i < keys.length - 1; i++) {
            m = (Map<String, Object>) m.computeIfAbsent(keys[i], k -> new LinkedHashMap<>());
        }
        m.put(keys[keys.length - 1], value);
    }

    /** A value different from istiod's default of the same kind. */
    private static Object changed(Object dflt) {
        return switch (dflt) {
            case Boolean b -> !b;
            case Integer i -> i + 1;
            case Double d -> d + 1;
            case List<?> l -> List.of("set-by-test");
            case Map<?, ?> m -> Map.of("setByTest", "x");
            case null, default -> "set-by-test";
        };
    }

    private static List<String> lines(Path file) throws IOException {
        return Files.readAllLines(file).stream().map(String::strip).filter(l -> !l.isEmpty() && !l.startsWith("#"))
                .toList();
    }
}
