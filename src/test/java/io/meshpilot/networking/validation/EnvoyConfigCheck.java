package io.meshpilot.networking.validation;

import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * Every check we can run in Java on what one Envoy was (or would be) sent: each resource
 * against its PGV rules ({@link ProtoConstraints}), then the resources against each other
 * ({@link XdsConsistency}). For golden files and generated meshes:
 *
 * <pre>{@code
 * EnvoyConfigCheck.Report r = EnvoyConfigCheck.check(new ProxyConfig(lds, rds, cds, eds));
 * assertEquals(List.of(), r.unexpected(Set.of("outbound|80||httpbin.org")));
 * }</pre>
 */
public final class EnvoyConfigCheck {
    /**
     * @param violations what Envoy would reject (or never finish warming)
     * @param dangling   route references to clusters that do not exist: accepted, answered with 503
     * @param coverage   which PGV rules ran, and how often
     */
    public record Report(List<Violation> violations, List<XdsConsistency.Dangling> dangling,
                         ProtoConstraints.Coverage coverage) {
        /** Violations, then dangling references to clusters not in {@code expectedDangling}, as text. */
        public List<String> unexpected(Set<String> expectedDangling) {
            List<String> out = new ArrayList<>();
            violations.forEach(v -> out.add(v.toString()));
            dangling.stream().filter(d -> !expectedDangling.contains(d.cluster())).forEach(d -> out.add(d.toString()));
            return out;
        }

        /** Violations and every dangling reference, as text. */
        public List<String> all() {
            return unexpected(Set.of());
        }
    }

    private EnvoyConfigCheck() {
    }

    public static Report check(ProxyConfig config) {
        return check(config, null);
    }

    /**
     * As {@link #check(ProxyConfig)}, with the extension configs (ECDS) the proxy gets: each
     * must pass the proto constraints, and every listener's ECDS reference must name one.
     */
    public static Report check(ProxyConfig config, List<TypedExtensionConfig> ecds) {
        ProtoConstraints pgv = new ProtoConstraints();
        config.listeners().forEach(l -> pgv.check("listeners[" + l.getName() + "]", l));
        config.routes().forEach(r -> pgv.check("routes[" + r.getName() + "]", r));
        config.clusters().forEach(c -> pgv.check("clusters[" + c.getName() + "]", c));
        if (config.hasEndpoints()) {
            config.endpoints().forEach(e -> pgv.check("endpoints[" + e.getClusterName() + "]", e));
        }
        Set<String> ecdsNames = null;
        if (ecds != null) {
            ecdsNames = new HashSet<>();
            for (var e : ecds) {
                pgv.check("extension_configs[" + e.getName() + "]", e);
                ecdsNames.add(e.getName());
            }
        }
        ProtoConstraints.Result proto = pgv.result();
        XdsConsistency.Result xds = XdsConsistency.check(config, ecdsNames);
        List<Violation> all = new ArrayList<>(proto.violations());
        all.addAll(xds.violations());
        return new Report(List.copyOf(all), xds.dangling(), proto.coverage());
    }
}
