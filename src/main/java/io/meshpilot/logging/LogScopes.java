package io.meshpilot.logging;

import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;

/**
 * The one table from our logger names to istiod's log scopes, so that {@code --log_output_level},
 * {@code istioctl admin log} and log pipelines keyed on {@code scope} see the names istiod
 * uses. A logger belongs to the scope of its longest matching prefix; a logger no prefix
 * matches (Helidon, the JDK, anything unlisted) is in {@code default}, as anything not logged
 * through a scope is in istiod.
 */
public final class LogScopes {
    public static final String DEFAULT = "default";

    /**
     * One istiod scope: its name and description as istiod registers them, the logger-name
     * prefixes (packages or classes) that log in it, and its level when no flag names it.
     */
    public record Scope(String name, String description, List<String> loggerPrefixes, LogLevel initialLevel) {
        public Scope {
            loggerPrefixes = List.copyOf(loggerPrefixes);
        }
    }

    /** istiod's pilot-discovery scopes we have components for; descriptions as istiod registers them. */
    public static final List<Scope> ALL = List.of(
            new Scope(DEFAULT, "Unscoped logging messages.", List.of(), LogLevel.INFO),
            new Scope("ads", "ads debugging", List.of("io.meshpilot.xds"), LogLevel.INFO),
            new Scope("authn", "authn debugging", List.of("io.meshpilot.networking.authn"), LogLevel.INFO),
            new Scope("authorization", "Istio Authorization Policy", List.of("io.meshpilot.networking.authz"), LogLevel.INFO),
            new Scope("ca", "CA service debugging", List.of("io.meshpilot.security.CertificateService"), LogLevel.INFO),
            new Scope("file", "File client messages", List.of("io.meshpilot.config.file"), LogLevel.INFO),
            // istiod: "default:info,grpc:none" unless a flag names grpc
            new Scope("grpc", "gRPC library logging", List.of("io.grpc"), LogLevel.NONE),
            new Scope("grpcgen", "xDS Generator for Proxyless gRPC", List.of("io.meshpilot.networking.grpcgen"), LogLevel.INFO),
            new Scope("klog", "Kubernetes client library logging", List.of("io.kubernetes"), LogLevel.INFO),
            new Scope("kube", "Kubernetes client messages",
                    List.of("io.meshpilot.kube", "io.meshpilot.config.kube", "io.meshpilot.registry.kube",
                            "io.meshpilot.registry.multicluster.RemoteSecretController",
                            "io.meshpilot.registry.multicluster.RemoteKubeconfig", "io.meshpilot.security.kube.NamespaceController"), LogLevel.INFO),
            // istiod's JWKS resolver lives in pilot/pkg/model and logs there
            new Scope("model", "model", List.of("io.meshpilot.model", "io.meshpilot.security.jwt"), LogLevel.INFO),
            new Scope("monitoring", "metrics monitoring", List.of("io.meshpilot.monitoring"), LogLevel.INFO),
            new Scope("pkica", "Citadel CA log", List.of("io.meshpilot.security.ca"), LogLevel.INFO),
            new Scope("serviceentry", "ServiceEntry registry", List.of("io.meshpilot.registry.serviceentry"), LogLevel.INFO),
            new Scope("validation", "CRD validation debugging", List.of("io.meshpilot.config.validation"), LogLevel.INFO));

    private static final Map<String, Scope> BY_NAME = ALL.stream()
            .collect(Collectors.toUnmodifiableMap(Scope::name, s -> s));

    /** (prefix, scope), longest prefix first. */
    private static final List<Map.Entry<String, Scope>> PREFIXES = ALL.stream()
            .flatMap(s -> s.loggerPrefixes().stream().map(p -> Map.entry(p, s)))
            .sorted(Comparator.comparingInt((Map.Entry<String, Scope> e) -> e.getKey().length()).reversed())
            .toList();

    private static final Map<String, Scope> CACHE = new ConcurrentHashMap<>();

    private LogScopes() {
    }

    public static Optional<Scope> byName(String name) {
        return Optional.ofNullable(BY_NAME.get(name));
    }

    /** The scope a logger logs in. */
    public static Scope of(String loggerName) {
        if (loggerName == null || loggerName.isEmpty()) {
            return BY_NAME.get(DEFAULT);
        }
        return CACHE.computeIfAbsent(loggerName, LogScopes::lookup);
    }

    private static Scope lookup(String loggerName) {
        for (Map.Entry<String, Scope> e : PREFIXES) {
            String p = e.getKey();
            if (loggerName.startsWith(p) && (loggerName.length() == p.length()
                    || loggerName.charAt(p.length()) == '.' || loggerName.charAt(p.length()) == '$')) {
                return e.getValue();
            }
        }
        return BY_NAME.get(DEFAULT);
    }

    /** The scope names, sorted, for messages. */
    static String names() {
        return String.join(", ", ALL.stream().map(Scope::name).sorted().toList());
    }
}
