package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.IstioGatewayApiGoldens.GoldenCase;
import io.meshpilot.config.kube.gateway.convert.GatewayApiConversion;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * istiod's TestConvertResources (pilot/pkg/config/kube/gateway/conversion_test.go at 86c9f01) over
 * its own testdata: each case's input converted by {@link GatewayApiConversion#convert} with the
 * services, Secrets, ConfigMaps, Namespaces and flags istiod's test gives it
 * ({@link IstiodConversionFixtures}), compared with its goldens in four parts, each a ratchet:
 * the cases in a part's set must match and every other case must not, so whoever makes a case
 * match adds it to the set (the test says which) and nobody loses one unnoticed.
 * <ul>
 * <li>{@code gateways}: the Istio Gateways, in istiod's order (creation time, namespace, name);</li>
 * <li>{@code routes}: the VirtualServices, then the DestinationRules, each in that order;</li>
 * <li>{@code gatewayStatus}: the status of every GatewayClass, Gateway and ListenerSet;</li>
 * <li>{@code routeStatus}: the status of every other object (routes, BackendTLSPolicies, InferencePools, ...).</li>
 * </ul>
 * Configs are compared by kind, namespace, name, labels, annotations and spec (proto equality);
 * statuses as JSON with {@code lastTransitionTime} masked, as istiod's test masks it. The table
 * and every difference go to {@code target/gateway-api-golden.md}; {@code -Dgateway.golden.case=NAME}
 * runs one case and prints its expected and actual output in full.
 */
class IstioGatewayApiGoldenTest {
    // On the day-0 skeleton (which converts nothing) a part matches only where istiod expects nothing.
    // The cases whose golden uses a field MeshPilot's Istio API lacks cannot match that part (see
    // IstioGatewayApiGoldenHarnessTest): http routes (HTTPRedirect prefixRewrite), backend-lb-policy and
    // backend-traffic-policy-ignored routes (RetryBudget budgetInterval).

    // One case a line, sorted: parallel branches that each add cases merge without conflicts.

    /** Cases whose Istio Gateways match the golden. */
    static final Set<String> GATEWAYS_MATCH = Set.of(
            "backend-lb-policy",
            "backend-tls-client-cert",
            "backend-tls-policy",
            "backend-tls-policy-ignored",
            "backend-traffic-policy-ignored",
            "delegated",
            "eastwest",
            "eastwest-labelport",
            "eastwest-remote",
            "eastwest-tlsoption",
            "empty-backend-refs",
            "foreign-waypoint",
            "frontend-tls-invalid",
            "frontend-tls-refgrant",
            "gateway-invalid-parameters-ref",
            "grpc",
            "http",
            "http-grpc-same-host",
            "invalid",
            "isolation",
            "listenerset",
            "listenerset-cross-namespace",
            "listenerset-empty-listeners",
            "listenerset-hostname-conflict",
            "listenerset-https-missing-tls",
            "listenerset-invalid",
            "listenerset-overlapping-port",
            "listenerset-protocol-conflict",
            "listenerset-same-name-different-ns",
            "mcs",
            "mesh",
            "mismatch",
            "mix-backend-policy",
            "multi-gateway",
            "redirect-only",
            "reference-grant-multiple-to",
            "reference-policy-inferencepool",
            "reference-policy-service",
            "reference-policy-tcp",
            "reference-policy-tls",
            "route-binding",
            "route-precedence",
            "serviceentry",
            "status",
            "tcp",
            "tls",
            "tls-terminate",
            "valid-invalid-parent-ref",
            "waypoint",
            "weighted",
            "xbackend",
            "zero");
    /** Cases whose VirtualServices and DestinationRules match the golden. */
    static final Set<String> ROUTES_MATCH = Set.of(
            "backend-tls-client-cert",
            "backend-tls-policy",
            "backend-tls-policy-ignored",
            "delegated",
            "east-west-ambient",
            "eastwest",
            "eastwest-labelport",
            "eastwest-remote",
            "eastwest-tlsoption",
            "empty-backend-refs",
            "foreign-waypoint",
            "frontend-tls-invalid",
            "frontend-tls-refgrant",
            "gateway-invalid-parameters-ref",
            "grpc",
            "http-grpc-same-host",
            "invalid",
            "isolation",
            "listenerset",
            "listenerset-cross-namespace",
            "listenerset-empty-listeners",
            "listenerset-hostname-conflict",
            "listenerset-https-missing-tls",
            "listenerset-invalid",
            "listenerset-overlapping-port",
            "listenerset-protocol-conflict",
            "listenerset-same-name-different-ns",
            "mcs",
            "mesh",
            "mismatch",
            "multi-gateway",
            "redirect-only",
            "reference-grant-multiple-to",
            "reference-policy-inferencepool",
            "reference-policy-service",
            "reference-policy-tcp",
            "reference-policy-tls",
            "route-binding",
            "route-precedence",
            "serviceentry",
            "status",
            "tcp",
            "tls",
            "tls-terminate",
            "valid-invalid-parent-ref",
            "waypoint",
            "weighted",
            "zero");
    /** Cases whose GatewayClass, Gateway and ListenerSet statuses match the status golden. */
    static final Set<String> GATEWAY_STATUS_MATCH = Set.of(
            "backend-lb-policy",
            "backend-tls-client-cert",
            "backend-tls-policy",
            "backend-tls-policy-ignored",
            "backend-traffic-policy-ignored",
            "delegated",
            "eastwest",
            "eastwest-labelport",
            "eastwest-remote",
            "eastwest-tlsoption",
            "empty-backend-refs",
            "foreign-waypoint",
            "frontend-tls-invalid",
            "frontend-tls-refgrant",
            "gateway-invalid-parameters-ref",
            "grpc",
            "http",
            "http-grpc-same-host",
            "invalid",
            "isolation",
            "listenerset",
            "listenerset-cross-namespace",
            "listenerset-empty-listeners",
            "listenerset-hostname-conflict",
            "listenerset-https-missing-tls",
            "listenerset-invalid",
            "listenerset-overlapping-port",
            "listenerset-protocol-conflict",
            "listenerset-same-name-different-ns",
            "mcs",
            "mesh",
            "mismatch",
            "mix-backend-policy",
            "multi-gateway",
            "redirect-only",
            "reference-grant-multiple-to",
            "reference-policy-inferencepool",
            "reference-policy-service",
            "reference-policy-tcp",
            "reference-policy-tls",
            "route-binding",
            "route-precedence",
            "serviceentry",
            "status",
            "tcp",
            "tls",
            "tls-terminate",
            "valid-invalid-parent-ref",
            "waypoint",
            "weighted",
            "xbackend",
            "zero");
    /** Cases whose route, BackendTLSPolicy and other statuses match the status golden. */
    static final Set<String> ROUTE_STATUS_MATCH = Set.of(
            "backend-tls-client-cert",
            "backend-tls-policy",
            "backend-tls-policy-ignored",
            "delegated",
            "east-west-ambient",
            "eastwest",
            "eastwest-labelport",
            "eastwest-remote",
            "eastwest-tlsoption",
            "empty-backend-refs",
            "foreign-waypoint",
            "frontend-tls-invalid",
            "frontend-tls-refgrant",
            "gateway-invalid-parameters-ref",
            "grpc",
            "http-grpc-same-host",
            "invalid",
            "isolation",
            "listenerset",
            "listenerset-cross-namespace",
            "listenerset-empty-listeners",
            "listenerset-hostname-conflict",
            "listenerset-https-missing-tls",
            "listenerset-invalid",
            "listenerset-overlapping-port",
            "listenerset-protocol-conflict",
            "listenerset-same-name-different-ns",
            "mcs",
            "mesh",
            "mismatch",
            "multi-gateway",
            "redirect-only",
            "reference-grant-multiple-to",
            "reference-policy-service",
            "reference-policy-tcp",
            "reference-policy-tls",
            "route-binding",
            "route-precedence",
            "serviceentry",
            "status",
            "tcp",
            "tls",
            "tls-terminate",
            "valid-invalid-parent-ref",
            "waypoint",
            "weighted",
            "zero");

    private static final Set<String> GATEWAY_STATUS_KINDS = Set.of(GatewayApiKinds.GATEWAY_CLASS, GatewayApiKinds.GATEWAY,
            GatewayApiKinds.LISTENER_SET);
    private static final String ONE_CASE_PROPERTY = "gateway.golden.case";
    private static final Path REPORT = Path.of("target", "gateway-api-golden.md");

    enum Part {
        GATEWAYS("gateways", GATEWAYS_MATCH),
        ROUTES("routes", ROUTES_MATCH),
        GATEWAY_STATUS("gatewayStatus", GATEWAY_STATUS_MATCH),
        ROUTE_STATUS("routeStatus", ROUTE_STATUS_MATCH);

        final String label;
        final Set<String> expectedToMatch;

        Part(String label, Set<String> expectedToMatch) {
            this.label = label;
            this.expectedToMatch = expectedToMatch;
        }
    }

    /** One case's outcome: the differences of each part (none: the part matches), and the inputs not fed. */
    record Outcome(String name, Map<Part, List<String>> differences, List<String> notConverted) {
        boolean matches(Part part) {
            return differences.get(part).isEmpty();
        }
    }

    @Test
    void convertsAsIstiod() throws IOException {
        String only = System.getProperty(ONE_CASE_PROPERTY, "");
        List<String> names = only.isEmpty() ? IstioGatewayApiGoldens.cases() : List.of(only);
        List<Outcome> outcomes = new ArrayList<>();
        for (String name : names) {
            GoldenCase golden = IstioGatewayApiGoldens.load(name);
            outcomes.add(convertAndCompare(golden, only.isEmpty() ? null : System.out));
        }
        String report = report(outcomes);
        Files.createDirectories(REPORT.getParent());
        Files.writeString(REPORT, report);
        System.out.println(report);

        List<String> ratchet = new ArrayList<>();
        for (Part part : Part.values()) {
            Set<String> matched = outcomes.stream().filter(o -> o.matches(part)).map(Outcome::name)
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> lost = names.stream().filter(part.expectedToMatch::contains).filter(n -> !matched.contains(n))
                    .collect(Collectors.toCollection(TreeSet::new));
            Set<String> gained = matched.stream().filter(n -> !part.expectedToMatch.contains(n))
                    .collect(Collectors.toCollection(TreeSet::new));
            if (!lost.isEmpty()) {
                ratchet.add(part.label + ": expected to match but differ: " + lost);
            }
            if (!gained.isEmpty()) {
                ratchet.add(part.label + ": now match, add them to " + part.name() + "_MATCH: " + gained);
            }
        }
        assertTrue(ratchet.isEmpty(), String.join("\n", ratchet) + "\n(details in " + REPORT.toAbsolutePath()
                + "; one case in full: -D" + ONE_CASE_PROPERTY + "=NAME)\n" + table(outcomes));
    }

    /** Converts one case and compares each part; with {@code fullOutput}, prints expected and actual whole. */
    private static Outcome convertAndCompare(GoldenCase golden, PrintStream fullOutput) {
        ConversionResult result;
        try {
            result = GatewayApiConversion.convert(golden.inputs());
        } catch (RuntimeException e) {
            Map<Part, List<String>> differences = new EnumMap<>(Part.class);
            for (Part part : Part.values()) {
                differences.put(part, List.of("the conversion threw " + e));
            }
            return new Outcome(golden.name(), differences, golden.notConverted());
        }
        if (fullOutput != null) {
            fullOutput.println("=== " + golden.name() + ": input objects not given to the conversion: "
                    + golden.notConverted());
            fullOutput.println("=== golden configs\n" + renderAll(golden.expectedConfigs()));
            fullOutput.println("=== MeshPilot configs\n" + renderAll(result.all()));
            fullOutput.println("=== golden statuses\n" + renderStatuses(golden.expectedStatuses()));
            fullOutput.println("=== MeshPilot statuses\n" + renderStatuses(result.statuses()));
            fullOutput.println("=== MeshPilot problems\n" + result.problems());
        }
        return compare(golden, result);
    }

    /** The differences of each part between the goldens of a case and a conversion's {@code result}. */
    static Outcome compare(GoldenCase golden, ConversionResult result) {
        List<Config> expectedGateways = ofKinds(golden.expectedConfigs(), "Gateway");
        List<Config> expectedRoutes = Stream.concat(ofKinds(golden.expectedConfigs(), "VirtualService").stream(),
                ofKinds(golden.expectedConfigs(), "DestinationRule").stream()).toList();
        List<Config> actualGateways = sorted(result.gateways());
        List<Config> actualRoutes = Stream.concat(sorted(result.virtualServices()).stream(),
                sorted(result.destinationRules()).stream()).toList();
        Map<ConfigKey, JsonObject> actualStatuses = new LinkedHashMap<>();
        result.statuses().forEach((k, v) -> actualStatuses.put(k, IstioGatewayApiGoldens.maskTransitionTimes(v)));
        Predicate<ConfigKey> gatewayKinds = k -> GATEWAY_STATUS_KINDS.contains(k.kind());

        Map<Part, List<String>> differences = new EnumMap<>(Part.class);
        differences.put(Part.GATEWAYS, withGoldenProblems(golden, List.of("Gateway"),
                GoldenComparison.configs(expectedGateways, actualGateways)));
        differences.put(Part.ROUTES, withGoldenProblems(golden, List.of("VirtualService", "DestinationRule"),
                GoldenComparison.configs(expectedRoutes, actualRoutes)));
        differences.put(Part.GATEWAY_STATUS, GoldenComparison.statuses(filter(golden.expectedStatuses(), gatewayKinds),
                filter(actualStatuses, gatewayKinds)));
        differences.put(Part.ROUTE_STATUS, GoldenComparison.statuses(filter(golden.expectedStatuses(),
                gatewayKinds.negate()), filter(actualStatuses, gatewayKinds.negate())));
        return new Outcome(golden.name(), differences, golden.notConverted());
    }

    /**
     * What of the golden's config of {@code kinds} (or of the whole file) could not be read, then
     * {@code differences}: a part whose expected config is incomplete must not match.
     */
    private static List<String> withGoldenProblems(GoldenCase golden, List<String> kinds, List<String> differences) {
        return Stream.concat(Stream.concat(Stream.of(""), kinds.stream()).flatMap(k -> golden.goldenProblems(k).stream())
                .map(p -> "golden not readable: " + p),
                differences.stream()).toList();
    }

    static List<Config> ofKinds(List<Config> configs, String kind) {
        return configs.stream().filter(c -> c.gvk().kind().equals(kind)).toList();
    }

    private static List<Config> sorted(List<Config> configs) {
        return configs.stream().sorted(GoldenComparison.ISTIOD_ORDER).toList();
    }

    private static Map<ConfigKey, JsonObject> filter(Map<ConfigKey, JsonObject> statuses, Predicate<ConfigKey> keep) {
        Map<ConfigKey, JsonObject> out = new LinkedHashMap<>();
        statuses.forEach((k, v) -> {
            if (keep.test(k)) {
                out.put(k, v);
            }
        });
        return out;
    }

    private static String renderAll(List<Config> configs) {
        return configs.stream().map(GoldenComparison::render).collect(Collectors.joining("\n---\n"));
    }

    private static String renderStatuses(Map<ConfigKey, JsonObject> statuses) {
        return statuses.entrySet().stream().map(e -> e.getKey() + "\n" + GoldenComparison.render(e.getValue()))
                .collect(Collectors.joining("\n---\n"));
    }

    private static String table(List<Outcome> outcomes) {
        StringBuilder sb = new StringBuilder();
        for (Outcome o : outcomes) {
            sb.append(o.name()).append(':');
            for (Part part : Part.values()) {
                sb.append(' ').append(part.label).append(o.matches(part) ? " ok" : " FAIL").append(',');
            }
            sb.setLength(sb.length() - 1);
            sb.append('\n');
        }
        for (Part part : Part.values()) {
            sb.append(part.label).append(": ").append(outcomes.stream().filter(o -> o.matches(part)).count())
                    .append(" of ").append(outcomes.size()).append('\n');
        }
        return sb.toString();
    }

    private static String report(List<Outcome> outcomes) {
        StringBuilder sb = new StringBuilder("# istiod's Gateway API goldens (IstioGatewayApiGoldenTest)\n\n```\n")
                .append(table(outcomes)).append("```\n");
        for (Outcome o : outcomes) {
            if (!o.notConverted().isEmpty()) {
                sb.append("\n").append(o.name()).append(": input objects GatewayApiInputs has no place for: ")
                        .append(o.notConverted()).append('\n');
            }
            for (Part part : Part.values()) {
                for (String d : o.differences().get(part)) {
                    sb.append("\n## ").append(o.name()).append(' ').append(part.label).append("\n\n```\n").append(d)
                            .append("\n```\n");
                }
            }
        }
        return sb.toString();
    }
}
