package io.meshpilot.cli;

import io.meshpilot.features.Keepalive;
import io.meshpilot.features.Listeners;
import io.meshpilot.kube.InClusterConfig;
import io.meshpilot.lifecycle.ExitCodes;
import io.meshpilot.util.GoDuration;
import io.meshpilot.features.EnvironmentUsage;
import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.ListenAddress;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.features.ServerMode;
import io.meshpilot.features.ServerTlsOptions;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.logging.ControlZ;
import io.meshpilot.logging.IstioLogging;
import io.meshpilot.logging.LogOptions;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.function.Function;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code pilot-discovery discovery}: istiod's flags, istiod's defaults. */
@Command(name = "discovery", mixinStandardHelpOptions = true,
        description = "Start the MeshPilot discovery service (xDS, CA, admin API).")
public final class DiscoveryCommand implements Callable<Integer> {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");
    /** istiod's flags MeshPilot reads but does not apply: a value given is warned about ({@link #unappliedFlags}). */
    public static final Set<String> READ_NOT_APPLIED = Set.of("--cniNamespace", "--profile");

    @Spec
    CommandSpec spec;

    @Option(names = "--registries", split = ",", paramLabel = "NAME",
            description = "Service registries: Kubernetes, Mock. Kubernetes is dropped when no cluster is configured. Default: Kubernetes.")
    List<String> registries = List.of("Kubernetes");

    @Option(names = "--kubeconfig", description = "Kubernetes config file instead of in-cluster configuration.")
    String kubeconfig = "";

    @Option(names = "--kubernetesApiQPS", description = "Maximum QPS when communicating with the Kubernetes API. "
            + "Default: ${DEFAULT-VALUE}.")
    double kubernetesApiQps = KubeClientOptions.DEFAULT_QPS;

    @Option(names = "--kubernetesApiBurst", description = "Maximum burst for throttle when communicating with the "
            + "Kubernetes API. Default: ${DEFAULT-VALUE}.")
    int kubernetesApiBurst = KubeClientOptions.DEFAULT_BURST;

    @Option(names = "--configDir", description = "Directory of Istio YAML config, watched. Default in embedded mode: etc/config.")
    String configDir;

    @Option(names = "--credentialsDir", description = "Directory of Kubernetes Secret manifests (YAML) holding TLS "
            + "credentials for gateways (credentialName, served over SDS), watched; empty disables. "
            + "Default in embedded mode: etc/credentials; a missing directory means no credentials.")
    String credentialsDir;

    @Option(names = "--meshConfig", description = "Mesh config file (YAML). Default: etc/istio/config/mesh; missing means Istio's defaults.")
    String meshConfig;

    @Option(names = "--networksConfig", description = "Mesh networks file (YAML). Default: etc/istio/config/meshNetworks.")
    String networksConfig;

    @Option(names = {"-n", "--namespace"}, description = "Namespace istiod runs in. Default: $POD_NAMESPACE or istio-system.")
    String namespace;

    @Option(names = "--domain", description = "DNS domain suffix. Default: ${DEFAULT-VALUE}.")
    String domain = "cluster.local";

    @Option(names = "--clusterID", description = "ID of the cluster this istiod runs in. Default: $CLUSTER_ID or Kubernetes.")
    String clusterId;

    @Option(names = "--clusterRegistriesNamespace", description = "Namespace of the remote Secrets (label "
            + "istio/multiCluster=true) holding kubeconfigs of other clusters. Default: $POD_NAMESPACE or istio-system.")
    String clusterRegistriesNamespace;

    @Option(names = "--clusterAliases", split = ",", paramLabel = "ALIAS=ID",
            description = "Alias names for clusters: a proxy reporting CLUSTER_ID alias is taken to be in cluster ID. "
                    + "Example: alias1=cluster1,alias2=cluster2.")
    Map<String, String> clusterAliases = new LinkedHashMap<>();

    @Option(names = "--httpAddr", description = "Readiness, debug and admin API listener. Default: ${DEFAULT-VALUE}.")
    String httpAddr = ":8080";

    @Option(names = "--httpsAddr", description = "Webhook (HTTPS) listener; empty serves webhooks on httpAddr. Default: ${DEFAULT-VALUE}.")
    String httpsAddr = ":15017";

    @Option(names = "--grpcAddr", description = "Plaintext xDS listener; empty multiplexes gRPC on httpAddr. Default: ${DEFAULT-VALUE}.")
    String grpcAddr = ":15010";

    @Option(names = "--secureGRPCAddr", description = "TLS xDS and CA listener. Default: ${DEFAULT-VALUE}.")
    String secureGrpcAddr = ":15012";

    @Option(names = "--monitoringAddr", description = "Metrics, version and debug listener; empty merges it into httpAddr. Default: ${DEFAULT-VALUE}.")
    String monitoringAddr = ":15014";

    @Option(names = "--keepaliveInterval", description = "gRPC keepalive ping interval. Default: $GRPC_KEEPALIVE_INTERVAL or 30s.")
    String keepaliveInterval;

    @Option(names = "--keepaliveTimeout", description = "gRPC keepalive ping timeout. Default: $GRPC_KEEPALIVE_TIMEOUT or 10s.")
    String keepaliveTimeout;

    @Option(names = "--keepaliveMaxServerConnectionAge", description = "Close gRPC connections after this age (gracefully). Default: infinite.")
    String keepaliveMaxServerConnectionAge = GoDuration.format(GoDuration.INFINITE);

    @Option(names = "--shutdownDuration", description = "How long to drain on SIGTERM. Default: ${DEFAULT-VALUE}.")
    String shutdownDuration = "10s";

    @Option(names = "--grpcTransport", description = "Server for the gRPC ports: helidon or netty. Default: ${DEFAULT-VALUE}.")
    String grpcTransport = "netty";

    @Option(names = "--caStateDir", description = "Where the self-signed CA keeps its root certificate and key "
            + "(no Kubernetes): created once, reused on every start. Default: var/ca under the installation.")
    String caStateDir;

    @Option(names = "--configStateDir", description = "Where the objects written over the REST API are kept "
            + "(no Kubernetes): each write is on disk before it is acknowledged and is loaded again at start. "
            + "One directory per server. Default: var/config under the installation.")
    String configStateDir;

    @Option(names = "--caKeyType", description = "Key type of a new self-signed root: RSA (istiod's default; "
            + "CITADEL_SELF_SIGNED_CA_RSA_KEY_SIZE bits) or EC (P-256). Default: ${DEFAULT-VALUE}.")
    String caKeyType = "RSA";

    @Option(names = "--log_output_level", paramLabel = "SCOPE:LEVEL,...",
            description = "Comma-separated minimum per-scope logging level of messages to output, in the form of "
                    + "<scope>:<level>,<scope>:<level>,... (a bare level is the default scope's; scope all sets every "
                    + "scope); levels: debug, info, warn, error, fatal, none. Default: default:info,grpc:none.")
    String logOutputLevel = "";

    @Option(names = "--log_stacktrace_level", paramLabel = "SCOPE:LEVEL,...",
            description = "Comma-separated minimum per-scope logging level at which stack traces are captured, "
                    + "same form as --log_output_level. Default: ${DEFAULT-VALUE}.")
    String logStacktraceLevel = "default:none";

    @Option(names = "--log_caller", paramLabel = "SCOPE,...",
            description = "Comma-separated list of scopes for which to include caller information (or all).")
    String logCaller = "";

    @Option(names = "--log_as_json", arity = "0..1", fallbackValue = "true", paramLabel = "BOOL",
            description = "Whether to format output as JSON or in plain console-friendly format. Default: false.")
    String logAsJson = "false";

    @Option(names = "--log_target", paramLabel = "PATH",
            description = "Where to write the log, repeatable: stdout, stderr or a file path (appended). Default: stdout.")
    List<String> logTargets;

    @Option(names = "--ctrlz_port", description = "The IP port to use for the ControlZ introspection facility "
            + "(its logging scopes: /scopej/, as istioctl admin log uses). Default: ${DEFAULT-VALUE}.")
    String ctrlzPort = String.valueOf(ControlZ.DEFAULT_PORT);

    @Option(names = "--ctrlz_address", description = "The IP address to listen on for ControlZ; * is every "
            + "address. Default: ${DEFAULT-VALUE}.")
    String ctrlzAddress = "localhost";

    @Option(names = "--caCertFile", description = "File containing the x509 Server CA Certificate: client "
            + "certificates on the secure gRPC port are checked against it. With --tlsCertFile and --tlsKeyFile, "
            + "istiod's certificate comes from these files (watched) instead of its CA.")
    String caCertFile = "";

    @Option(names = "--tlsCertFile", description = "File containing the x509 Server Certificate (see --caCertFile).")
    String tlsCertFile = "";

    @Option(names = "--tlsKeyFile", description = "File containing the x509 private key matching --tlsCertFile.")
    String tlsKeyFile = "";

    @Option(names = "--tls-cipher-suites", split = ",", paramLabel = "NAME",
            description = "Comma-separated list of cipher suites (Go's names) for the secure gRPC port. If omitted, "
                    + "the defaults are used; ignored when --tls-min-version is 1.3.")
    List<String> tlsCipherSuites = new ArrayList<>();

    @Option(names = "--tls-min-version", description = "Minimum TLS version for the secure gRPC port. Only 1.2 and "
            + "1.3 are supported. Default: ${DEFAULT-VALUE}.")
    String tlsMinVersion = ServerTlsOptions.TLS_1_2;

    @Option(names = "--cniNamespace", description = "Namespace of istio-cni, whose nodes istiod untaints (ambient); "
            + "MeshPilot does not untaint nodes: a value given is warned about. Default: $POD_NAMESPACE.")
    String cniNamespace;

    @Option(names = "--profile", arity = "0..1", fallbackValue = "true", paramLabel = "BOOL",
            description = "Enable profiling via web interface host:port/debug/pprof. MeshPilot always serves its "
                    + "profiles: false is warned about. Default: true.")
    String profile = "true";

    private Function<String, String> env = System::getenv;

    /** Replaces the process environment; for tests. */
    DiscoveryCommand withEnv(Function<String, String> env) {
        this.env = env;
        return this;
    }

    @Override
    public Integer call() {
        PilotArgs args;
        int controlzPort;
        IstioLogging logging;
        EnvironmentUsage envUsage = EnvironmentUsage.ofIstiod(env);
        env = envUsage;
        try {
            LogOptions logOptions = logOptions();
            controlzPort = port("ctrlz_port", ctrlzPort);
            args = toArgs();
            // before the first line of the server, as istiod configures logging before anything
            logging = IstioLogging.install(logOptions);
            if (!logOptions.unknownScopes().isEmpty()) {
                LOG.log(System.Logger.Level.WARNING, logOptions.unknownScopesWarning());
            }
            for (String unapplied : unappliedFlags()) {
                LOG.log(System.Logger.Level.WARNING, unapplied);
            }
            String unsupportedEnv = envUsage.unsupportedWarning();
            if (unsupportedEnv != null) {
                LOG.log(System.Logger.Level.WARNING, unsupportedEnv);
            }
        } catch (IllegalArgumentException e) {
            System.err.println("pilot-discovery: invalid arguments: " + e.getMessage());
            return ExitCodes.USAGE;
        }
        ControlZ controlz = ControlZ.start(ctrlzAddress, controlzPort, logging.scopes(), BuildInfo.current().istiodInfo());
        try {
            return MeshPilotServer.runUntilShutdown(args);
        } finally {
            if (controlz != null) {
                controlz.close();
            }
        }
    }

    /** istiod's flags that are read but do nothing here, each with why: one start-up line each. */
    List<String> unappliedFlags() {
        List<String> out = new ArrayList<>();
        if (cniNamespace != null) {
            out.add("--cniNamespace " + cniNamespace + " ignored: istiod untaints istio-cni's nodes (ambient), "
                    + "which MeshPilot does not do");
        }
        if (!Boolean.parseBoolean(profile.trim())) {
            out.add("--profile " + profile + " ignored: /debug/pprof stays served (MeshPilot's JFR profiles)");
        }
        return out;
    }

    /** istiod's logging flags, validated. */
    LogOptions logOptions() {
        return LogOptions.parse(logOutputLevel, logStacktraceLevel, logCaller, logAsJson,
                logTargets == null ? List.of() : logTargets);
    }

    private static int port(String flag, String value) {
        try {
            int p = Integer.parseInt(value.trim());
            if (p >= 0 && p <= 65535) {
                return p;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--" + flag + " \"" + value + "\": expected a port number 0-65535");
    }

    private boolean registriesGiven() {
        return spec != null && spec.commandLine().getParseResult() != null
                && spec.commandLine().getParseResult().hasMatchedOption("--registries");
    }

    /** Turns the raw flags and the environment into validated, immutable args. */
    PilotArgs toArgs() {
        Path home = Path.of(System.getProperty("meshpilot.home", "."));
        String kubeconfigEnv = env.apply("KUBECONFIG");
        String inPod = env.apply("KUBERNETES_SERVICE_HOST");

        List<String> regs = new ArrayList<>();
        for (String r : registries) {
            String t = r.trim();
            if (t.isEmpty()) {
                continue;
            }
            if (!t.equals("Kubernetes") && !t.equals("Mock")) {
                throw new IllegalArgumentException("--registries: unknown registry \"" + t + "\" (known: Kubernetes, Mock)");
            }
            regs.add(t);
        }
        ServerMode mode;
        String reason;
        if (!kubeconfig.isBlank()) {
            mode = ServerMode.KUBERNETES;
            reason = "--kubeconfig " + kubeconfig;
        } else if (kubeconfigEnv != null && !kubeconfigEnv.isBlank()) {
            mode = ServerMode.KUBERNETES;
            reason = "KUBECONFIG=" + kubeconfigEnv;
        } else if (inPod != null && !inPod.isBlank()) {
            mode = ServerMode.KUBERNETES;
            reason = "running in a pod (KUBERNETES_SERVICE_HOST)";
        } else {
            mode = ServerMode.EMBEDDED;
            reason = "no --kubeconfig, no KUBECONFIG, not in a pod";
            // the default (Kubernetes) is dropped quietly; asked for by name it cannot be served
            if (registriesGiven() && regs.contains("Kubernetes")) {
                throw new IllegalArgumentException("--registries Kubernetes: no Kubernetes cluster is configured "
                        + "(no --kubeconfig, no KUBECONFIG, not in a pod)");
            }
            regs.remove("Kubernetes");
        }

        Path cfgDir = configDir != null ? (configDir.isBlank() ? null : Path.of(configDir))
                : mode == ServerMode.EMBEDDED ? home.resolve("etc/config") : null;
        Path mesh = meshConfig != null ? Path.of(meshConfig) : home.resolve("etc/istio/config/mesh");
        Path networks = networksConfig != null ? Path.of(networksConfig) : home.resolve("etc/istio/config/meshNetworks");
        if (cfgDir != null && Files.exists(cfgDir) && !Files.isDirectory(cfgDir)) {
            throw new IllegalArgumentException("--configDir " + cfgDir + " is not a directory");
        }
        Path credDir = credentialsDir != null ? (credentialsDir.isBlank() ? null : Path.of(credentialsDir))
                : mode == ServerMode.EMBEDDED ? home.resolve("etc/credentials") : null;
        if (credDir != null && Files.exists(credDir) && !Files.isDirectory(credDir)) {
            throw new IllegalArgumentException("--credentialsDir " + credDir + " is not a directory");
        }

        String ns = namespace != null ? namespace : orDefault(env.apply("POD_NAMESPACE"), "istio-system");
        String cluster = clusterId != null ? clusterId : orDefault(env.apply("CLUSTER_ID"), "Kubernetes");
        if (domain.isBlank()) {
            throw new IllegalArgumentException("--domain must not be empty");
        }

        var listeners = new Listeners(
                ListenAddress.parse("httpAddr", httpAddr),
                ListenAddress.parse("grpcAddr", grpcAddr),
                ListenAddress.parse("secureGRPCAddr", secureGrpcAddr),
                ListenAddress.parse("monitoringAddr", monitoringAddr),
                ListenAddress.parse("httpsAddr", httpsAddr));
        GrpcTransportKind transport = switch (grpcTransport.trim().toLowerCase(Locale.ROOT)) {
            case "helidon" -> GrpcTransportKind.HELIDON;
            case "netty" -> GrpcTransportKind.NETTY;
            default -> throw new IllegalArgumentException("--grpcTransport \"" + grpcTransport + "\": expected helidon or netty");
        };

        var keepalive = new Keepalive(
                duration("keepaliveInterval", keepaliveInterval != null ? keepaliveInterval
                        : orDefault(env.apply("GRPC_KEEPALIVE_INTERVAL"), "30s")),
                duration("keepaliveTimeout", keepaliveTimeout != null ? keepaliveTimeout
                        : orDefault(env.apply("GRPC_KEEPALIVE_TIMEOUT"), "10s")),
                duration("keepaliveMaxServerConnectionAge", keepaliveMaxServerConnectionAge));

        PilotFeatures features = PilotFeatures.fromEnv(env);
        boolean ecdsa = switch (caKeyType.trim().toUpperCase(Locale.ROOT)) {
            case "RSA" -> false;
            case "EC", "ECDSA" -> true;
            default -> throw new IllegalArgumentException("--caKeyType \"" + caKeyType + "\": expected RSA or EC");
        };
        var ca = new PilotArgs.Ca(caStateDir != null ? Path.of(caStateDir) : home.resolve("var/ca"), ecdsa);
        List<String> ignored = spec == null ? List.of() : spec.commandLine().getUnmatchedArguments();
        Path stateDir = configStateDir != null ? Path.of(configStateDir) : home.resolve("var/config");
        if (configStateDir != null && configStateDir.isBlank()) {
            throw new IllegalArgumentException("--configStateDir must not be empty");
        }
        if (Files.exists(stateDir) && !Files.isDirectory(stateDir)) {
            throw new IllegalArgumentException("--configStateDir " + stateDir + " is not a directory");
        }
        if (cfgDir != null) {
            // compared where they really are, symlinks resolved: the watched source would read
            // the kept objects as files of its own, and the store would take the config files
            // for damaged objects of its own
            Path realState = realLocation(stateDir);
            Path realConfig = realLocation(cfgDir);
            if (realState.startsWith(realConfig)) {
                throw new IllegalArgumentException("--configStateDir " + stateDir + " must not be inside --configDir "
                        + cfgDir + sameAs(realState, stateDir, realConfig, cfgDir));
            }
            if (realConfig.startsWith(realState)) {
                throw new IllegalArgumentException("--configDir " + cfgDir + " must not be inside --configStateDir "
                        + stateDir + sameAs(realState, stateDir, realConfig, cfgDir));
            }
        }
        KubeClientOptions kube = null;
        if (mode == ServerMode.KUBERNETES) {
            // istiod's kube.DefaultRestConfig: the flag, else $KUBECONFIG, else in-cluster
            Path file = !kubeconfig.isBlank() ? Path.of(kubeconfig)
                    : kubeconfigEnv != null && !kubeconfigEnv.isBlank() ? Path.of(kubeconfigEnv.split(File.pathSeparator)[0])
                    : null;
            String syncTimeout = orDefault(env.apply("MESHPILOT_KUBE_SYNC_TIMEOUT"), "30s");
            Duration sync;
            try {
                sync = GoDuration.parse(syncTimeout);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("MESHPILOT_KUBE_SYNC_TIMEOUT \"" + syncTimeout + "\": " + e.getMessage());
            }
            String ttlText = orDefault(env.apply("MESHPILOT_LEADER_ELECTION_TTL"), "30s");
            Duration ttl;
            try {
                ttl = GoDuration.parse(ttlText);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("MESHPILOT_LEADER_ELECTION_TTL \"" + ttlText + "\": " + e.getMessage());
            }
            String pod = env.apply("POD_NAME");
            kube = new KubeClientOptions(file, kubernetesApiQps, kubernetesApiBurst, sync,
                    pod == null || pod.isBlank() ? KubeClientOptions.defaultIdentity() : pod, ttl,
                    file == null ? InClusterConfig.fromEnv(env) : null);
        }
        return new PilotArgs(mode, reason, regs, kubeconfig, cfgDir, stateDir, credDir, mesh, networks, ns, domain, cluster,
                listeners, keepalive, duration("shutdownDuration", shutdownDuration), transport, features, ca, ignored,
                kube, orDefault(env.apply("REVISION"), ""),
                clusterRegistriesNamespace != null && !clusterRegistriesNamespace.isBlank() ? clusterRegistriesNamespace
                        : orDefault(env.apply("POD_NAMESPACE"), "istio-system"),
                clusterAliases(), tlsOptions(transport));
    }

    /** istiod's TLS flags, validated (ServerTlsOptions); they shape grpc-java Netty's secure port only. */
    private ServerTlsOptions tlsOptions(GrpcTransportKind transport) {
        String profileValue = profile.trim().toLowerCase(Locale.ROOT);
        if (!profileValue.equals("true") && !profileValue.equals("false")) {
            throw new IllegalArgumentException("--profile \"" + profile + "\": expected true or false");
        }
        ServerTlsOptions tls = new ServerTlsOptions(caCertFile.trim(), tlsCertFile.trim(), tlsKeyFile.trim(),
                tlsCipherSuites.stream().map(String::trim).filter(c -> !c.isEmpty()).toList(), tlsMinVersion.trim());
        if (transport == GrpcTransportKind.HELIDON
                && (!tls.cipherSuites().isEmpty() || !tls.minVersion().equals(ServerTlsOptions.TLS_1_2))) {
            throw new IllegalArgumentException("--tls-min-version and --tls-cipher-suites need --grpcTransport netty");
        }
        return tls;
    }

    /** --clusterAliases, checked: neither side may be empty. */
    private Map<String, String> clusterAliases() {
        clusterAliases.forEach((alias, id) -> {
            if (alias.isBlank() || id == null || id.isBlank()) {
                throw new IllegalArgumentException("--clusterAliases \"" + alias + "=" + (id == null ? "" : id)
                        + "\": expected ALIAS=CLUSTER_ID with neither empty");
            }
        });
        return clusterAliases;
    }

    /**
     * Where {@code path} really is: its deepest existing ancestor with symlinks resolved, plus
     * the part that does not exist yet (normalized, absolute).
     */
    static Path realLocation(Path path) {
        Path absolute = path.toAbsolutePath().normalize();
        Path existing = absolute;
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return absolute;
        }
        try {
            return existing.toRealPath().resolve(existing.relativize(absolute));
        } catch (IOException e) {
            return absolute; // unreadable on the way: checked as written
        }
    }

    private static String sameAs(Path realState, Path stateDir, Path realConfig, Path cfgDir) {
        boolean resolved = !realState.equals(stateDir.toAbsolutePath().normalize())
                || !realConfig.equals(cfgDir.toAbsolutePath().normalize());
        return resolved ? " (symlinks resolved: " + realState + " and " + realConfig + ")" : "";
    }

    private static Duration duration(String flag, String value) {
        try {
            Duration d = GoDuration.parse(value);
            if (d.isNegative()) {
                throw new IllegalArgumentException("must not be negative");
            }
            return d;
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("--" + flag + " \"" + value + "\": " + e.getMessage());
        }
    }

    private static String orDefault(String v, String dflt) {
        return v == null || v.isBlank() ? dflt : v;
    }
}
