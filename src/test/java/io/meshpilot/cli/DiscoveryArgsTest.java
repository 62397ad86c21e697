package io.meshpilot.cli;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.ListenAddress;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.features.ServerMode;
import io.meshpilot.util.GoDuration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Flags and env as istiod's pilot-discovery: names, defaults, overrides, errors. */
class DiscoveryArgsTest {
    private static PilotArgs parse(Map<String, String> env, String... flags) {
        return Main.parseDiscoveryArgs(flags, env::get);
    }

    @Test
    void defaultsAreIstiodsAndResolveToEmbeddedMode() {
        PilotArgs a = parse(Map.of());
        assertEquals(ServerMode.EMBEDDED, a.mode());
        assertEquals(new ListenAddress("0.0.0.0", 8080), a.listeners().http());
        assertEquals(new ListenAddress("0.0.0.0", 15010), a.listeners().grpc());
        assertEquals(new ListenAddress("0.0.0.0", 15012), a.listeners().secureGrpc());
        assertEquals(new ListenAddress("0.0.0.0", 15014), a.listeners().monitoring());
        assertEquals(new ListenAddress("0.0.0.0", 15017), a.listeners().https());
        assertEquals("istio-system", a.namespace());
        assertEquals("Kubernetes", a.clusterId());
        assertEquals("cluster.local", a.domainSuffix());
        assertEquals(Duration.ofSeconds(10), a.shutdownDuration());
        assertEquals(Duration.ofSeconds(30), a.keepalive().interval());
        assertEquals(Duration.ofSeconds(10), a.keepalive().timeout());
        assertEquals(GoDuration.INFINITE, a.keepalive().maxServerConnectionAge());
        assertEquals(GrpcTransportKind.NETTY, a.grpcTransport());
        assertEquals(List.of(), a.registries(), "no Kubernetes configured: ServiceEntry registry only");
        Path home = Path.of(System.getProperty("meshpilot.home", "."));
        assertEquals(home.resolve("etc/config"), a.configDir());
        assertEquals(home.resolve("etc/credentials"), a.credentialsDir());
        assertEquals(home.resolve("var/config"), a.configStateDir());
        assertEquals(home.resolve("etc/istio/config/mesh"), a.meshConfigFile());
        assertEquals(Duration.ofMillis(100), a.features().debounceAfter());
        assertEquals(Duration.ofSeconds(10), a.features().debounceMax());
        assertTrue(a.features().pushThrottle() >= 20 && a.features().pushThrottle() <= 100);
        assertEquals(Duration.ofHours(24), a.features().defaultWorkloadCertTtl());
        assertEquals(Duration.ofDays(90), a.features().maxWorkloadCertTtl());
    }

    @Test
    void credentialsDirIsAFlagEmptyDisablesItAndKubernetesHasNoneByDefault() {
        assertEquals(Path.of("/srv/creds"), parse(Map.of(), "--credentialsDir", "/srv/creds").credentialsDir());
        assertEquals(null, parse(Map.of(), "--credentialsDir", "").credentialsDir());
        assertEquals(null, parse(Map.of("KUBECONFIG", "/tmp/kc")).credentialsDir());
    }

    @Test
    void configStateDirIsAFlagAndMustBeADirectory() throws Exception {
        assertEquals(Path.of("/srv/state"), parse(Map.of(), "--configStateDir", "/srv/state").configStateDir());
        Path file = Files.createTempFile("state", ".txt");
        try {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> parse(Map.of(), "--configStateDir", file.toString()));
            assertTrue(e.getMessage().contains("--configStateDir"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--configStateDir", " "));
            IllegalArgumentException inside = assertThrows(IllegalArgumentException.class,
                    () -> parse(Map.of(), "--configDir", "/srv/config", "--configStateDir", "/srv/config/state"));
            assertTrue(inside.getMessage().contains("inside --configDir"), inside.getMessage());
        } finally {
            Files.delete(file);
        }
    }

    /** Neither directory may hold the other, wherever symlinks make them really be. */
    @Test
    void configDirAndConfigStateDirMustNotHoldEachOtherThroughSymlinksEither(@TempDir Path dir)
            throws Exception {
        IllegalArgumentException outer = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of(), "--configDir", "/srv/state/config", "--configStateDir", "/srv/state"));
        assertTrue(outer.getMessage().contains("--configDir /srv/state/config must not be inside --configStateDir"),
                outer.getMessage());

        Path config = Files.createDirectories(dir.resolve("config"));
        Path link = Files.createSymbolicLink(dir.resolve("link"), config);
        IllegalArgumentException viaLink = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of(), "--configDir", config.toString(), "--configStateDir", link.resolve("state").toString()));
        assertTrue(viaLink.getMessage().contains("inside --configDir") && viaLink.getMessage().contains("symlinks resolved"),
                viaLink.getMessage());
        Path state = Files.createDirectories(dir.resolve("state"));
        Path stateLink = Files.createSymbolicLink(dir.resolve("state-link"), state);
        IllegalArgumentException configViaLink = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of(), "--configDir", stateLink.resolve("config").toString(),
                        "--configStateDir", state.toString()));
        assertTrue(configViaLink.getMessage().contains("inside --configStateDir"), configViaLink.getMessage());

        // side by side is fine
        assertEquals(state, parse(Map.of(), "--configDir", config.toString(), "--configStateDir", state.toString())
                .configStateDir());
    }

    @Test
    void multiclusterFlagsAsIstiod() {
        PilotArgs a = parse(Map.of());
        assertEquals("istio-system", a.clusterRegistriesNamespace());
        assertEquals(Map.of(), a.clusterAliases());
        assertEquals(Duration.ofSeconds(30), a.features().registry().remoteClusterTimeout());
        assertEquals("mesh", parse(Map.of("POD_NAMESPACE", "mesh")).clusterRegistriesNamespace(),
                "istiod's default: the pod's namespace");
        assertEquals("remotes", parse(Map.of("POD_NAMESPACE", "mesh"), "--clusterRegistriesNamespace", "remotes")
                .clusterRegistriesNamespace());
        assertEquals(Map.of("old-east", "east", "old-west", "west"),
                parse(Map.of(), "--clusterAliases", "old-east=east,old-west=west").clusterAliases());
        assertEquals(Duration.ZERO, parse(Map.of("PILOT_REMOTE_CLUSTER_TIMEOUT", "0s")).features().registry()
                .remoteClusterTimeout(), "0 waits for remote clusters");
        var bad = assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--clusterAliases", "=east"));
        assertTrue(bad.getMessage().contains("--clusterAliases"), bad.getMessage());
    }

    @Test
    void kubernetesIsDetectedFromFlagEnvOrPod() {
        assertEquals(ServerMode.KUBERNETES, parse(Map.of(), "--kubeconfig", "/tmp/kc").mode());
        assertEquals(ServerMode.KUBERNETES, parse(Map.of("KUBECONFIG", "/tmp/kc")).mode());
        PilotArgs inPod = parse(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "443"));
        assertEquals(ServerMode.KUBERNETES, inPod.mode());
        assertEquals(List.of("Kubernetes"), inPod.registries());
        assertNull(inPod.configDir(), "with Kubernetes, config comes from CRDs unless --configDir is given");
    }

    @Test
    void theKubernetesClientIsConfiguredAsIstiodsDefaultRestConfig() {
        assertNull(parse(Map.of()).kube(), "embedded: no client");
        var fromFlag = parse(Map.of("KUBECONFIG", "/env/kc"), "--kubeconfig", "/flag/kc").kube();
        assertEquals(Path.of("/flag/kc"), fromFlag.kubeconfig(), "the flag wins over KUBECONFIG");
        assertEquals(80.0, fromFlag.qps(), "istiod's --kubernetesApiQPS default");
        assertEquals(160, fromFlag.burst(), "istiod's --kubernetesApiBurst default");
        assertEquals(Path.of("/env/a"), parse(Map.of("KUBECONFIG", "/env/a:/env/b")).kube().kubeconfig(),
                "the first file of KUBECONFIG");
        var inCluster = parse(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBERNETES_SERVICE_PORT", "6443")).kube();
        assertNull(inCluster.kubeconfig(), "in-cluster");
        assertEquals("https://10.0.0.1:6443", inCluster.inCluster().url());
        assertEquals(Path.of("/var/run/secrets/kubernetes.io/serviceaccount/token"), inCluster.inCluster().tokenFile(),
                "the kubelet's service-account mount");
        assertEquals(Path.of("/sa/ca.crt"), parse(Map.of("KUBERNETES_SERVICE_HOST", "fd00::1", "KUBERNETES_SERVICE_PORT", "443",
                "MESHPILOT_SERVICE_ACCOUNT_DIR", "/sa")).kube().inCluster().caFile());
        assertEquals("https://[fd00::1]:443", parse(Map.of("KUBERNETES_SERVICE_HOST", "fd00::1",
                "KUBERNETES_SERVICE_PORT", "443")).kube().inCluster().url());
        IllegalArgumentException noPort = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1")));
        assertTrue(noPort.getMessage().contains("KUBERNETES_SERVICE_PORT is not"), noPort.getMessage());
        assertNull(parse(Map.of("KUBERNETES_SERVICE_HOST", "10.0.0.1", "KUBECONFIG", "/kc")).kube().inCluster(),
                "a kubeconfig wins over the pod's service account");
        var tuned = parse(Map.of(), "--kubeconfig", "/kc", "--kubernetesApiQPS", "5.5", "--kubernetesApiBurst", "7").kube();
        assertEquals(5.5, tuned.qps());
        assertEquals(7, tuned.burst());
        assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--kubeconfig", "/kc", "--kubernetesApiQPS", "0"));
        assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--kubeconfig", "/kc", "--kubernetesApiBurst", "0"));
        assertEquals("canary", parse(Map.of("REVISION", "canary")).revision());
        // leader election: istiod's 30s TTL and $POD_NAME as the Lease holder; a test may shorten the TTL
        assertEquals(Duration.ofSeconds(30), fromFlag.leaderElectionTtl());
        var pod = parse(Map.of("POD_NAME", "istiod-7", "MESHPILOT_LEADER_ELECTION_TTL", "2s"), "--kubeconfig", "/kc").kube();
        assertEquals("istiod-7", pod.identity());
        assertEquals(Duration.ofSeconds(2), pod.leaderElectionTtl());
        var tooShort = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of("MESHPILOT_LEADER_ELECTION_TTL", "500ms"), "--kubeconfig", "/kc"));
        assertTrue(tooShort.getMessage().contains("MESHPILOT_LEADER_ELECTION_TTL"), tooShort.getMessage());
    }

    @Test
    void kubernetesRegistryAskedForByNameWithoutAClusterIsAnError() {
        assertEquals(List.of("Mock"), parse(Map.of(), "--registries", "Mock").registries());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> parse(Map.of(), "--registries", "Kubernetes"));
        assertTrue(e.getMessage().startsWith("--registries Kubernetes: no Kubernetes cluster is configured"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--registries", "Mock,Kubernetes"));
    }

    @Test
    void envOverridesAsIstiod() {
        Map<String, String> env = new HashMap<>();
        env.put("POD_NAMESPACE", "mesh-system");
        env.put("CLUSTER_ID", "east");
        env.put("PILOT_DEBOUNCE_AFTER", "250ms");
        env.put("PILOT_PUSH_THROTTLE", "7");
        env.put("GRPC_KEEPALIVE_INTERVAL", "1m");
        PilotArgs a = parse(env);
        assertEquals("mesh-system", a.namespace());
        assertEquals("east", a.clusterId());
        assertEquals(Duration.ofMillis(250), a.features().debounceAfter());
        assertEquals(7, a.features().pushThrottle());
        assertEquals(Duration.ofMinutes(1), a.keepalive().interval());
        // an explicit flag wins over the env default
        assertEquals("other", parse(env, "-n", "other").namespace());
    }

    @Test
    void listenAddressesAcceptIstiodForms() {
        PilotArgs a = parse(Map.of(), "--httpAddr", "127.0.0.1:0", "--grpcAddr", "", "--monitoringAddr", "[::1]:9000");
        assertEquals(new ListenAddress("127.0.0.1", 0), a.listeners().http());
        assertNull(a.listeners().grpc(), "empty grpcAddr: gRPC is multiplexed on the http port");
        assertEquals(new ListenAddress("::1", 9000), a.listeners().monitoring());
    }

    @Test
    void unknownFlagsAreKeptForAWarningNotAnError() {
        PilotArgs a = parse(Map.of(), "--resync=60s", "--plugins", "authn", "--domain", "example.org");
        assertEquals("example.org", a.domainSuffix());
        assertTrue(a.ignoredArguments().contains("--resync=60s"), a.ignoredArguments().toString());
        assertTrue(a.ignoredArguments().contains("--plugins"), a.ignoredArguments().toString());
    }

    @Test
    void badValuesNameTheFlagOrVariable() {
        var e1 = assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--shutdownDuration", "10"));
        assertTrue(e1.getMessage().contains("--shutdownDuration"), e1.getMessage());
        var e2 = assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--httpAddr", "localhost"));
        assertTrue(e2.getMessage().contains("--httpAddr"), e2.getMessage());
        var e3 = assertThrows(IllegalArgumentException.class, () -> parse(Map.of("PILOT_DEBOUNCE_MAX", "soon")));
        assertTrue(e3.getMessage().contains("PILOT_DEBOUNCE_MAX"), e3.getMessage());
        var e4 = assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--grpcTransport", "okhttp"));
        assertTrue(e4.getMessage().contains("--grpcTransport"), e4.getMessage());
        // Netty serves the gRPC listeners with an address; an empty one is multiplexed on http (Helidon's)
        assertNull(parse(Map.of(), "--grpcTransport", "netty", "--grpcAddr", "").listeners().grpc());
        var e6 = assertThrows(IllegalArgumentException.class, () -> parse(Map.of(), "--registries", "Consul"));
        assertTrue(e6.getMessage().contains("Consul"), e6.getMessage());
    }
}
