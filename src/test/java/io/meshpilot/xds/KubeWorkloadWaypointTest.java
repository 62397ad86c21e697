package io.meshpilot.xds;

import static io.meshpilot.xds.KubeWaypointProxyTest.awaitListeners;
import static io.meshpilot.xds.KubeWaypointProxyTest.chain;
import static io.meshpilot.xds.KubeWaypointProxyTest.unpack;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.github.xds.type.matcher.v3.IPMatcher;
import com.github.xds.type.matcher.v3.Matcher;
import com.google.protobuf.StringValue;
import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.envoyproxy.envoy.config.listener.v3.ListenerFilter;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.AdsClient;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 35 point 4: a waypoint proxy serving traffic addressed to a workload, end to end against
 * the API server stand-in. In the ambient namespace {@code bank} three waypoints exist (their
 * managed Services, as the deployment controller makes them), one per {@code istio.io/waypoint-for}:
 * {@code wl-waypoint} (workload), {@code svc-waypoint} (service) and {@code all-waypoint} (all).
 * Each has a Service and a pod labelled {@code istio.io/use-waypoint} naming it. As istiod's
 * listener_waypoint.go buildWaypointInternal, a waypoint's {@code main_internal} matches the IPs
 * of the workloads bound to it (PushContext.WorkloadsForWaypoint) with istiod's application
 * protocol matcher: HTTP ({@code h2c}, {@code http/1.1}) to {@code direct-http}, anything else
 * to {@code direct-tcp}, both ending at the {@code encap} cluster; and its HTTP inspector then
 * runs on every port (a workload is reached on any port).
 */
class KubeWorkloadWaypointTest {
    static final String LEDGER_IP = "10.0.2.10";
    static final String TELLER_IP = "10.0.2.11";
    static final String VAULT_IP = "10.0.2.12";

    @TempDir
    static Path dir;
    static FakeApiServer api;
    static Kubectl kubectl;
    static MeshPilotServer server;

    @BeforeAll
    static void startClusterAndServer() throws Exception {
        api = FakeApiServer.start();
        api.installIstioCrds();
        kubectl = new Kubectl(Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH")),
                api.writeKubeconfig(dir), dir.resolve("kubectl"));
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: bank, labels: {istio.io/dataplane-mode: ambient}}
                ---
                """ + waypointService("wl-waypoint", "workload", "10.96.1.1", "10.0.6.1")
                + waypointService("svc-waypoint", "service", "10.96.1.2", "10.0.6.2")
                + waypointService("all-waypoint", "all", "10.96.1.3", "10.0.6.3")
                + usingWaypoint("ledger", "10.96.2.10", LEDGER_IP, "wl-waypoint")
                + usingWaypoint("teller", "10.96.2.11", TELLER_IP, "svc-waypoint")
                + usingWaypoint("vault", "10.96.2.12", VAULT_IP, "all-waypoint"), "apply", "-f", "-").ok();
        // the API server keeps no status a pod is created with: it is the kubelet's to write
        for (Map.Entry<String, String> pod : Map.of("ledger-0", LEDGER_IP, "teller-0", TELLER_IP, "vault-0", VAULT_IP)
                .entrySet()) {
            kubectl.run("patch", "pod", pod.getKey(), "-n", "bank", "--subresource=status", "--type=merge", "-p",
                    "{\"status\":{\"phase\":\"Running\",\"podIP\":\"" + pod.getValue()
                            + "\",\"conditions\":[{\"type\":\"Ready\",\"status\":\"True\"}]}}").ok();
        }
        server = MeshPilotServer.start(TestServers.args(TestServers.kubernetesFlags(dir, dir.resolve("kubeconfig")),
                Map.of("PILOT_ENABLE_AMBIENT", "true")));
    }

    @AfterAll
    static void stop() {
        if (server != null) {
            server.close();
        }
        if (api != null) {
            api.stop();
        }
    }

    /** A waypoint's Service as the deployment controller makes it (HBONE port 15008) and its ready pod. */
    static String waypointService(String name, String waypointFor, String vip, String podIp) {
        return KubeGammaRoutesTest.serviceWithEndpoint("bank", name, "mesh", 15008, podIp, 15008, vip, "{}",
                "{gateway.istio.io/managed: istio.io-mesh-controller, gateway.networking.k8s.io/gateway-name: " + name
                        + ", istio.io/waypoint-for: " + waypointFor + "}",
                "gateway.networking.k8s.io/gateway-name: " + name);
    }

    /** A Service (HTTP 9080) and its captured pod, both labelled to use {@code waypoint}. */
    static String usingWaypoint(String name, String vip, String podIp, String waypoint) {
        return KubeGammaRoutesTest.serviceWithEndpoint("bank", name, "http", 9080, podIp, 9080, vip,
                "{ambient.istio.io/redirection: enabled}", "{istio.io/use-waypoint: " + waypoint + "}",
                "istio.io/use-waypoint: " + waypoint);
    }

    /** The waypoint's Envoy as istio-agent names it, with the labels the {@code waypoint} template gives its pod. */
    static AdsClient waypoint(String name, String waypointFor) {
        return new AdsClient(server.ports().get("grpc"), "waypoint~10.0.6.9~" + name + "-7c9d-abc.bank~bank.svc.cluster.local",
                Map.of("NAMESPACE", "bank", "CLUSTER_ID", "Kubernetes", "SERVICE_ACCOUNT", name,
                        "WORKLOAD_NAME", name, "LABELS", """
                                {"gateway.networking.k8s.io/gateway-name": "%s",
                                 "gateway.networking.k8s.io/gateway-class-name": "istio-waypoint",
                                 "gateway.istio.io/managed": "istio.io-mesh-controller",
                                 "istio.io/waypoint-for": "%s"}""".formatted(name, waypointFor)));
    }

    @Test
    void aWorkloadWaypointMatchesItsPodsIpToTheDirectChainsUntilThePodsLabelGoes() throws Exception {
        try (AdsClient waypoint = waypoint("wl-waypoint", "workload")) {
            waypoint.subscribe(TypeUrls.LISTENER, List.of());
            Listener main = awaitListeners(waypoint, l -> workloadMatch(l.get("main_internal"), LEDGER_IP).isPresent())
                    .get("main_internal");

            Matcher byProtocol = workloadMatch(main, LEDGER_IP).orElseThrow().getOnMatch().getMatcher();
            assertEquals("application-protocol", byProtocol.getMatcherTree().getInput().getName());
            Map<String, Matcher.OnMatch> alpn = byProtocol.getMatcherTree().getExactMatchMap().getMapMap();
            assertEquals("direct-http", chainOf(alpn.get("'http/1.1'")));
            assertEquals("direct-http", chainOf(alpn.get("'h2c'")));
            assertEquals("direct-tcp", chainOf(byProtocol.getOnNoMatch()), "any other protocol is TCP");
            assertTrue(chain(main, "direct-tcp").isPresent() && chain(main, "direct-http").isPresent());
            assertEquals(32, workloadMatch(main, LEDGER_IP).orElseThrow().getRanges(0).getPrefixLen().getValue());
            assertFalse(httpInspector(main).hasFilterDisabled(),
                    "a workload is reached on any port: the HTTP inspector runs on all: " + httpInspector(main));

            // the Service ledger names wl-waypoint too, but a waypoint for workloads serves no service
            assertTrue(chain(main, "inbound-vip|9080|http|ledger.bank.svc.cluster.local").isEmpty(),
                    main.getFilterChainsList().toString());
            assertFalse(ipMatcher(main).toString().contains("10.96.2.10"), "no service VIP: " + ipMatcher(main));

            kubectl.run("label", "pod", "ledger-0", "-n", "bank", "istio.io/use-waypoint-").ok();
            awaitListeners(waypoint, l -> l.containsKey("main_internal")
                    && workloadMatch(l.get("main_internal"), LEDGER_IP).isEmpty());
        } finally {
            kubectl.run("label", "--overwrite", "pod", "ledger-0", "-n", "bank",
                    "istio.io/use-waypoint=wl-waypoint").ok();
        }
    }

    @Test
    void aServiceWaypointServesItsServiceButNoWorkload() throws Exception {
        try (AdsClient waypoint = waypoint("svc-waypoint", "service")) {
            waypoint.subscribe(TypeUrls.LISTENER, List.of());
            Listener main = awaitListeners(waypoint, l -> chain(l.get("main_internal"),
                    "inbound-vip|9080|http|teller.bank.svc.cluster.local").isPresent()).get("main_internal");
            assertTrue(workloadMatch(main, TELLER_IP).isEmpty(), "teller-0 is not bound to a waypoint for services: "
                    + ipMatcher(main));
        }
    }

    @Test
    void aWaypointForAllServesItsServiceAndItsWorkload() throws Exception {
        try (AdsClient waypoint = waypoint("all-waypoint", "all")) {
            waypoint.subscribe(TypeUrls.LISTENER, List.of());
            Listener main = awaitListeners(waypoint, l -> workloadMatch(l.get("main_internal"), VAULT_IP).isPresent())
                    .get("main_internal");
            assertTrue(chain(main, "inbound-vip|9080|http|vault.bank.svc.cluster.local").isPresent(),
                    main.getFilterChainsList().toString());
            List<String> order = ipMatcher(main).getRangeMatchersList().stream()
                    .map(r -> r.getRanges(0).getAddressPrefix()).toList();
            assertEquals(List.of("10.96.2.12", VAULT_IP), order, "services' VIPs first, then workloads (as istiod)");
        }
    }

    static IPMatcher ipMatcher(Listener main) {
        return unpack(main.getFilterChainMatcher().getMatcherTree().getCustomMatch().getTypedConfig(), IPMatcher.class);
    }

    /** The range matcher of {@code main_internal} holding exactly {@code ip}, if any. */
    static Optional<IPMatcher.IPRangeMatcher> workloadMatch(Listener main, String ip) {
        if (main == null) {
            return Optional.empty();
        }
        return ipMatcher(main).getRangeMatchersList().stream()
                .filter(r -> r.getRangesList().stream().anyMatch(c -> c.getAddressPrefix().equals(ip)))
                .findFirst();
    }

    static String chainOf(Matcher.OnMatch onMatch) {
        return unpack(onMatch.getAction().getTypedConfig(), StringValue.class).getValue();
    }

    static ListenerFilter httpInspector(Listener main) {
        return main.getListenerFiltersList().stream().filter(f -> f.getName().contains("http_inspector"))
                .findFirst().orElseThrow(() -> new AssertionError("no HTTP inspector: " + main.getListenerFiltersList()));
    }
}
