package io.meshpilot.inject.kubegateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.inject.InjectionValues;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.kube.RevisionTags;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The deployment controller against the API server stand-in, driven with kubectl: a Gateway of
 * class {@code istio} gets its ServiceAccount, Deployment and Service, owned by the Gateway,
 * with the listeners' ports, written by server-side apply as {@code istio.io/gateway-controller};
 * an existing Service without the managed label is left alone; a parametersRef ConfigMap's change
 * is rendered again; an invalid parametersRef is reported and deploys nothing; manual Gateways
 * and other classes (the waypoint class too, without ambient) are left alone.
 *
 * <p>The stand-in has no Gateway API CRDs of its own yet: the test installs minimal ones
 * (Gateway and GatewayClass, any fields, a status subresource).
 */
class GatewayDeploymentControllerTest {
    private static final Duration WAIT = Duration.ofSeconds(20);
    /** istiod 86c9f01 reads ListenerSet gateway.networking.k8s.io/v1 (pkg/config/schema/gvr ListenerSet). */
    private static final Path LISTENER_SET_CRD =
            Path.of("src/test/resources/kube/gateway-api/experimental/gateway.networking.k8s.io_listenersets.yaml");
    /** A minimal CRD of the Gateway API group: any fields, a status subresource. */
    private static String crd(String kind, String plural, String scope) {
        return """
                apiVersion: apiextensions.k8s.io/v1
                kind: CustomResourceDefinition
                metadata: {name: %2$s.gateway.networking.k8s.io}
                spec:
                  group: gateway.networking.k8s.io
                  scope: %3$s
                  names: {kind: %1$s, listKind: %1$sList, plural: %2$s, singular: %4$s}
                  versions:
                  - name: v1
                    served: true
                    storage: true
                    subresources: {status: {}}
                    schema:
                      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
                """.formatted(kind, plural, scope, kind.toLowerCase(Locale.ROOT));
    }

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    KubeClient client;
    AutoCloseable term;
    CapturedLog log;

    @BeforeEach
    void cluster() throws Exception {
        api = FakeApiServer.start();
        api.installCrds(crd("Gateway", "gateways", "Namespaced") + "---\n" + crd("GatewayClass", "gatewayclasses", "Cluster"));
        api.installCrds(Files.readString(LISTENER_SET_CRD));
        kubectl = Kubectl.against(api, dir);
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: istio-system}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop}
                """, "apply", "-f", "-").ok();
        log = new CapturedLog(GatewayDeploymentController.class);
        client = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        GatewayDeploymentController controller = new GatewayDeploymentController(client, "istio-system",
                new DeploymentInput.Settings("Kubernetes", 132, "", true, false, true, false), UnaryOperator.identity(),
                () -> InjectionValues.parse("{\"global\":{\"hub\":\"example.com/istio\",\"tag\":\"1.31.0\"}}"),
                () -> new MeshConfigLoader().defaults());
        assertEquals(List.of(), client.runAndWait(WAIT));
        term = controller.lead();
    }

    @AfterEach
    void stop() throws Exception {
        if (term != null) {
            term.close();
        }
        if (client != null) {
            client.close();
        }
        log.close();
        api.close();
    }

    /** A Gateway of class {@code istio} with one HTTP listener on 80. */
    private static String gateway(String name, String namespace, Map<String, String> labels) {
        return """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: %s, namespace: %s, labels: %s}
                spec:
                  gatewayClassName: istio
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                """.formatted(name, namespace, new Gson().toJson(labels));
    }

    private void apply(String yaml) {
        kubectl.runWithInput(yaml, "apply", "-f", "-").ok();
    }

    private Optional<JsonObject> get(String kind, String name) {
        var r = kubectl.run("get", kind, name, "-n", "shop", "-o", "json");
        return r.exit() == 0 ? Optional.of(JsonParser.parseString(r.stdout()).getAsJsonObject()) : Optional.empty();
    }

    private JsonObject await(String kind, String name) throws InterruptedException {
        Await.until(kind + " shop/" + name, WAIT, () -> get(kind, name).isPresent());
        return get(kind, name).orElseThrow();
    }

    @Test
    void aGatewayOfClassIstioGetsItsObjectsOwnedByItWithItsListenersPorts() throws Exception {
        apply("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: web, namespace: shop, labels: {team: shop}}
                spec:
                  gatewayClassName: istio
                  listeners:
                  - {name: http, port: 80, protocol: HTTP}
                  - {name: shop.secure, port: 443, protocol: HTTPS}
                  - {name: http-again, port: 80, protocol: HTTP}
                """);
        String uid = get("gateway", "web").orElseThrow().getAsJsonObject("metadata").get("uid").getAsString();
        JsonObject deployment = await("deployment", "web-istio");
        JsonObject service = await("service", "web-istio");
        JsonObject sa = await("serviceaccount", "web-istio");
        for (JsonObject o : List.of(deployment, service, sa)) {
            JsonObject meta = o.getAsJsonObject("metadata");
            JsonObject owner = meta.getAsJsonArray("ownerReferences").get(0).getAsJsonObject();
            assertEquals("Gateway", owner.get("kind").getAsString());
            assertEquals("web", owner.get("name").getAsString());
            assertEquals(uid, owner.get("uid").getAsString(), "owned by the Gateway: deleting it deletes them");
            JsonObject labels = meta.getAsJsonObject("labels");
            assertEquals("istio.io-gateway-controller", labels.get("gateway.istio.io/managed").getAsString());
            assertEquals("web", labels.get("gateway.networking.k8s.io/gateway-name").getAsString());
            assertEquals("istio", labels.get("gateway.networking.k8s.io/gateway-class-name").getAsString());
            assertEquals("shop", labels.get("team").getAsString(), "the Gateway's labels are copied");
        }
        assertEquals(List.of("status-port/15021/tcp", "http/80/http", "shop-secure/443/https"), servicePorts("web-istio"));
        assertEquals("LoadBalancer", service.getAsJsonObject("spec").get("type").getAsString());
        JsonObject pod = deployment.getAsJsonObject("spec").getAsJsonObject("template");
        assertEquals("false", pod.getAsJsonObject("metadata").getAsJsonObject("labels").get("sidecar.istio.io/inject")
                .getAsString());
        JsonObject proxy = pod.getAsJsonObject("spec").getAsJsonArray("containers").get(0).getAsJsonObject();
        assertEquals("istio-proxy", proxy.get("name").getAsString());
        assertEquals("example.com/istio/proxyv2:1.31.0", proxy.get("image").getAsString());
        assertEquals("web-istio", pod.getAsJsonObject("spec").get("serviceAccountName").getAsString());
        assertTrue(api.requestLog().stream().anyMatch(l -> l.startsWith("PATCH /apis/apps/v1/namespaces/shop/deployments/web-istio?")
                && l.contains("fieldManager=istio.io%2Fgateway-controller") && l.contains("force=true")), api.requestLog().toString());
        assertTrue(api.requestLog().stream().anyMatch(l -> l.startsWith(
                "PATCH /apis/gateway.networking.k8s.io/v1/namespaces/shop/gateways/web/status?")),
                "the controller version is claimed on the status subresource");

        // a listener added: the Service gets its port
        apply("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: web, namespace: shop, labels: {team: shop}}
                spec:
                  gatewayClassName: istio
                  listeners:
                  - {name: http, port: 80, protocol: HTTP}
                  - {name: shop.secure, port: 443, protocol: HTTPS}
                  - {name: tcp, port: 9000, protocol: TCP}
                """);
        Await.until("the Service's new port", WAIT, () -> get("service", "web-istio").orElseThrow().getAsJsonObject("spec")
                .getAsJsonArray("ports").size() == 4);
    }

    @Test
    void anExistingServiceWithoutTheManagedLabelIsLeftAlone() throws Exception {
        apply("""
                apiVersion: v1
                kind: Service
                metadata: {name: mine-istio, namespace: shop, labels: {owner: me}}
                spec:
                  selector: {app: mine}
                  ports: [{name: web, port: 8080}]
                """);
        apply("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: mine, namespace: shop}
                spec:
                  gatewayClassName: istio
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                """);
        await("deployment", "mine-istio");
        Await.until("the skip logged", WAIT, () -> log.has("INFO", "gateway shop/mine", "Service mine-istio", "left alone"));
        JsonObject service = get("service", "mine-istio").orElseThrow();
        assertEquals("me", service.getAsJsonObject("metadata").getAsJsonObject("labels").get("owner").getAsString());
        assertFalse(service.getAsJsonObject("metadata").getAsJsonObject("labels").has("gateway.istio.io/managed"));
        assertFalse(service.getAsJsonObject("metadata").has("ownerReferences"));
        JsonArray ports = service.getAsJsonObject("spec").getAsJsonArray("ports");
        assertEquals(1, ports.size());
        assertEquals(8080, ports.get(0).getAsJsonObject().get("port").getAsInt());
    }

    @Test
    void aParametersRefConfigMapChangeIsRenderedAgain() throws Exception {
        // the Gateway first: nothing is deployed until its ConfigMap exists, so only the
        // ConfigMap's events can bring the renderings below
        apply(withParameters("tuned", "ConfigMap", "gw-options"));
        Await.until("the missing ConfigMap reported", WAIT, () -> log.has("SEVERE", "gateway shop/tuned: not deployed:"));
        apply(options(2));
        Await.until("2 replicas once the ConfigMap exists", WAIT, () -> replicas("tuned-istio") == 2);
        apply(options(3));
        Await.until("3 replicas after the ConfigMap's change", WAIT, () -> replicas("tuned-istio") == 3);
        assertEquals(1, await("horizontalpodautoscaler", "tuned-istio").getAsJsonObject("spec").get("maxReplicas").getAsInt());
    }

    /** A Gateway of class istio whose infrastructure parameters are {@code kind} {@code name}. */
    private static String withParameters(String gateway, String kind, String name) {
        return """
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: %s, namespace: shop}
                spec:
                  gatewayClassName: istio
                  infrastructure:
                    parametersRef: {group: "", kind: %s, name: %s}
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                """.formatted(gateway, kind, name);
    }

    private static String options(int replicas) {
        return """
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: gw-options, namespace: shop}
                data:
                  deployment: |
                    spec:
                      replicas: %d
                  horizontalPodAutoscaler: |
                    spec:
                      minReplicas: 1
                """.formatted(replicas);
    }

    private int replicas(String name) {
        return get("deployment", name).map(d -> d.getAsJsonObject("spec").has("replicas")
                ? d.getAsJsonObject("spec").get("replicas").getAsInt() : -1).orElse(-1);
    }

    @Test
    void anInvalidParametersRefIsReportedAndDeploysNothingUntilFixed() throws Exception {
        apply(withParameters("broken", "ConfigMap", "missing"));
        Await.until("the missing ConfigMap reported", WAIT, () -> log.has("SEVERE", "gateway shop/broken: not deployed:",
                "parametersRef targeting configmap \"shop/missing\", but configmap does not exist"));
        apply(withParameters("wrongkind", "Secret", "whatever"));
        Await.until("the wrong kind reported", WAIT, () -> log.has("SEVERE", "gateway shop/wrongkind: not deployed:",
                "unknown infrastructure parameters type /Secret"));
        apply("""
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: missing, namespace: shop}
                data:
                  gateway: |
                    spec: {}
                """);
        Await.until("the unsupported key reported", WAIT, () -> log.has("SEVERE", "gateway shop/broken: not deployed:",
                "unsupported overlay \"gateway\""));
        assertTrue(get("deployment", "broken-istio").isEmpty());
        assertTrue(get("deployment", "wrongkind-istio").isEmpty());
        apply("""
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: missing, namespace: shop}
                data:
                  deployment: |
                    spec: {replicas: 2}
                """);
        await("deployment", "broken-istio");
        assertTrue(log.lines().stream().noneMatch(l -> l.contains("Exception")), log.lines().toString());
    }

    @Test
    void manualGatewaysAndOtherClassesAreLeftAlone() throws Exception {
        apply("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: manual, namespace: shop}
                spec:
                  gatewayClassName: istio
                  addresses: [{type: Hostname, value: my-gateway.shop.svc.cluster.local}]
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: other, namespace: shop}
                spec:
                  gatewayClassName: someone-elses
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: waypoint, namespace: shop}
                spec:
                  gatewayClassName: istio-waypoint
                  listeners: [{name: mesh, port: 15008, protocol: HBONE}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: GatewayClass
                metadata: {name: mine}
                spec: {controllerName: istio.io/gateway-controller}
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: custom, namespace: shop}
                spec:
                  gatewayClassName: mine
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                """);
        // the custom class naming istiod's controller is deployed: the others were reconciled before it
        await("deployment", "custom-mine");
        assertTrue(get("deployment", "manual-istio").isEmpty(), "a hostname address: the user's own deployment");
        assertTrue(get("deployment", "other-someone-elses").isEmpty(), "another controller's class");
        assertTrue(get("deployment", "waypoint").isEmpty() && get("deployment", "waypoint-istio-waypoint").isEmpty(),
                "without ambient waypoints the waypoint class is not istiod's");
    }

    /**
     * ENABLE_GATEWAY_API_MANUAL_DEPLOYMENT=false: istiod's IsManaged (gatewaycommon/gateway_utils.go)
     * is true for every Gateway, so one with a Hostname address is deployed too, as the
     * conversion then expects.
     */
    @Test
    void withoutManualDeploymentsAGatewayWithAHostnameAddressIsDeployed() throws Exception {
        term.close();
        term = null;
        try (KubeClient other = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000))) {
            GatewayDeploymentController noManual = new GatewayDeploymentController(other, "istio-system",
                    new DeploymentInput.Settings("Kubernetes", 132, "", true, false, false, false), UnaryOperator.identity(),
                    () -> InjectionValues.parse("{}"), () -> new MeshConfigLoader().defaults());
            assertEquals(List.of(), other.runAndWait(WAIT));
            try (AutoCloseable leading = noManual.lead()) {
                apply("""
                        apiVersion: gateway.networking.k8s.io/v1
                        kind: Gateway
                        metadata: {name: manual, namespace: shop}
                        spec:
                          gatewayClassName: istio
                          addresses: [{type: Hostname, value: my-lb}]
                          listeners: [{name: http, port: 80, protocol: HTTP}]
                        """);
                await("deployment", "manual-istio");
            }
        }
    }

    @Test
    void asTheServerBuildsItTheInjectorValuesAndTheApiServersVersionAreRead() throws Exception {
        term.close(); // the server's controller alone writes below
        term = null;
        apply("""
                apiVersion: v1
                kind: ConfigMap
                metadata: {name: istio-sidecar-injector-canary, namespace: istio-system}
                data:
                  values: '{"global":{"hub":"registry.example.com/mesh","tag":"9.9.9"}}'
                """);
        try (KubeClient server = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000))) {
            GatewayDeploymentController controller = GatewayDeploymentController.forServer(server, "istio-system", "canary",
                    "cluster-a", UnaryOperator.identity(), true, false, () -> new MeshConfigLoader().defaults()).orElseThrow();
            assertEquals(List.of(), server.runAndWait(WAIT));
            try (AutoCloseable leading = controller.lead()) {
                apply("""
                        apiVersion: gateway.networking.k8s.io/v1
                        kind: Gateway
                        metadata: {name: canary, namespace: shop, labels: {istio.io/rev: canary}}
                        spec:
                          gatewayClassName: istio
                          listeners: [{name: http, port: 80, protocol: HTTP}]
                        """);
                JsonObject deployment = await("deployment", "canary-istio");
                JsonObject proxy = deployment.getAsJsonObject("spec").getAsJsonObject("template").getAsJsonObject("spec")
                        .getAsJsonArray("containers").get(0).getAsJsonObject();
                assertEquals("registry.example.com/mesh/proxyv2:9.9.9", proxy.get("image").getAsString());
                assertTrue(proxy.getAsJsonArray("env").toString().contains(
                        "{\"name\":\"ISTIO_META_CLUSTER_ID\",\"value\":\"cluster-a\"}"), proxy.get("env").toString());
                assertTrue(await("serviceaccount", "canary-istio").getAsJsonObject("metadata").has("ownerReferences"),
                        "the stand-in says 1.32: ServiceAccounts are owned too");

                apply("""
                        apiVersion: v1
                        kind: ConfigMap
                        metadata: {name: istio-sidecar-injector-canary, namespace: istio-system}
                        data:
                          values: '{"global":{"hub":"registry.example.com/mesh","tag":"9.9.10"}}'
                        """);
                Await.until("the injector's new tag rendered", WAIT, () -> get("deployment", "canary-istio").orElseThrow()
                        .toString().contains("registry.example.com/mesh/proxyv2:9.9.10"));
            }
        }
    }

    /**
     * The revision a Gateway belongs to is istiod's tag watcher's ({@code IsMine},
     * pkg/revisions/tag_watcher.go, called by gatewaycommon/deploymentcontroller.go Reconcile):
     * the Gateway's {@code istio.io/rev}, else its namespace's, resolving revision tags. The
     * default revision leaves alone a Gateway whose namespace names revision 1-28; 1-28 deploys
     * it, and one labelled with a tag pointing at 1-28.
     */
    @Test
    void theNamespacesRevisionLabelAndRevisionTagsChooseTheRevisionThatDeploys() throws Exception {
        apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: canary, labels: {istio.io/rev: 1-28}}
                """);
        // the namespace and Gateway informers are separate watches: a Gateway of a namespace whose
        // label the controller has not seen yet is judged without it (as istiod's would be), so the
        // namespace goes first and gets time to arrive
        Thread.sleep(1000);
        apply(gateway("by-namespace", "canary", Map.of()) + "---\n"
                + gateway("by-tag", "shop", Map.of("istio.io/rev", "prod")));
        // the default revision's single worker reconciles in order: once this is deployed, so are those
        apply(gateway("marker", "shop", Map.of()));
        await("deployment", "marker-istio");
        assertTrue(kubectl.run("get", "deployment", "by-namespace-istio", "-n", "canary").exit() != 0,
                "the default revision deployed a Gateway of a namespace labelled istio.io/rev=1-28");

        apply("""
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: istio-revision-tag-prod
                  labels: {istio.io/rev: 1-28, istio.io/tag: prod}
                webhooks: []
                """);
        try (KubeClient other = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
             RevisionTags tags = RevisionTags.watch(other)) {
            GatewayDeploymentController canary = new GatewayDeploymentController(other, "istio-system",
                    new DeploymentInput.Settings("Kubernetes", 132, "1-28", true, false, true, false), tags,
                    () -> InjectionValues.parse("{}"), () -> new MeshConfigLoader().defaults());
            assertEquals(List.of(), other.runAndWait(WAIT));
            try (AutoCloseable leading = canary.lead()) {
                Await.until("1-28 deploys the Gateway of its namespace", WAIT,
                        () -> kubectl.run("get", "deployment", "by-namespace-istio", "-n", "canary").exit() == 0);
                JsonObject byTag = await("deployment", "by-tag-istio");
                assertEquals("1-28", byTag.getAsJsonObject("spec").getAsJsonObject("template").getAsJsonObject("metadata")
                        .getAsJsonObject("annotations").get("istio.io/rev").getAsString(), "rendered by 1-28");
            }
        }
    }

    /**
     * A namespace change requeues its Gateways (istiod's deploymentcontroller.go namespaces
     * handler): a Gateway left alone because its namespace named another revision is deployed
     * once the label is gone, with no change to the Gateway.
     */
    @Test
    void aNamespaceChangeReEvaluatesItsGateways() throws Exception {
        apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: moving, labels: {istio.io/rev: other}}
                ---
                """ + gateway("web", "moving", Map.of()) + "---\n" + gateway("marker", "shop", Map.of()));
        await("deployment", "marker-istio");
        assertTrue(kubectl.run("get", "deployment", "web-istio", "-n", "moving").exit() != 0,
                "another revision's namespace");
        kubectl.run("label", "namespace", "moving", "istio.io/rev-").ok();
        Await.until("the Gateway deployed once its namespace is the default revision's", WAIT,
                () -> kubectl.run("get", "deployment", "web-istio", "-n", "moving").exit() == 0);
    }

    private List<String> servicePorts(String name) {
        List<String> ports = new ArrayList<>();
        get("service", name).orElseThrow().getAsJsonObject("spec").getAsJsonArray("ports").forEach(p -> ports.add(
                p.getAsJsonObject().get("name").getAsString() + "/" + p.getAsJsonObject().get("port").getAsInt()
                        + "/" + p.getAsJsonObject().get("appProtocol").getAsString()));
        return ports;
    }

    /**
     * istiod's deployment controller (gatewaycommon/deploymentcontroller.go configureIstioGateway)
     * adds the listeners of the ListenerSets its Gateway's {@code allowedListeners} admits to the
     * Service's ports, and a ListenerSet event requeues its parent Gateway.
     */
    @Test
    void theListenersOfAdmittedListenerSetsAreOnTheServiceUntilTheListenerSetGoes() throws Exception {
        apply("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: team}
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: web, namespace: shop}
                spec:
                  gatewayClassName: istio
                  allowedListeners: {namespaces: {from: All}}
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: closed, namespace: shop}
                spec:
                  gatewayClassName: istio
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                """);
        await("service", "web-istio");
        await("service", "closed-istio");
        apply("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: ListenerSet
                metadata: {name: extra, namespace: team}
                spec:
                  parentRef: {name: web, namespace: shop}
                  listeners:
                  - name: team.secure
                    port: 8443
                    protocol: HTTPS
                    tls: {certificateRefs: [{name: team-cert}]}
                  - {name: again, port: 80, protocol: HTTP}
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: ListenerSet
                metadata: {name: refused, namespace: shop}
                spec:
                  parentRef: {name: closed}
                  listeners: [{name: tcp, port: 9000, protocol: TCP}]
                """);
        Await.until("the ListenerSet's port on the Service", WAIT, () -> servicePorts("web-istio").size() == 3);
        assertEquals(List.of("status-port/15021/tcp", "http/80/http", "team-secure/8443/https"),
                servicePorts("web-istio"), "named after the listener; a port the Gateway has is not repeated");

        // the Gateway with no allowedListeners admits none: rendered again without the port
        apply(gateway("closed", "shop", Map.of("rerendered", "yes")));
        Await.until("the relabelled Gateway rendered again", WAIT, () -> get("service", "closed-istio").orElseThrow()
                .getAsJsonObject("metadata").getAsJsonObject("labels").has("rerendered"));
        assertEquals(List.of("status-port/15021/tcp", "http/80/http"), servicePorts("closed-istio"));

        // a ListenerSet pointed at another Gateway leaves its former parent's Service
        String moving = """
                apiVersion: gateway.networking.k8s.io/v1
                kind: ListenerSet
                metadata: {name: moving, namespace: team}
                spec:
                  parentRef: {name: %s, namespace: shop}
                  listeners: [{name: admin, port: 9443, protocol: TCP}]
                """;
        apply(moving.formatted("web"));
        Await.until("the second ListenerSet's port", WAIT, () -> servicePorts("web-istio").size() == 4);
        apply(moving.formatted("closed"));
        Await.until("the port gone with the ListenerSet's parentRef", WAIT, () -> servicePorts("web-istio").size() == 3);
        assertEquals(List.of("status-port/15021/tcp", "http/80/http", "team-secure/8443/https"), servicePorts("web-istio"));

        kubectl.run("delete", "listenerset", "extra", "-n", "team").ok();
        Await.until("the port gone with the ListenerSet", WAIT, () -> servicePorts("web-istio").size() == 2);
        assertEquals(List.of("status-port/15021/tcp", "http/80/http"), servicePorts("web-istio"));
    }

    /**
     * istiod runs its deployment controller once the Gateway CRD exists
     * (pilot/pkg/bootstrap/configcontroller.go: {@code CrdWatcher().WaitForCRD(gvr.KubernetesGateway, ...)}):
     * a server started before the Gateway API CRDs deploys the Gateways created after them.
     */
    @Test
    void gatewayApiCrdsInstalledAfterTheServerStartedStartTheController() throws Exception {
        term.close();
        term = null;
        try (FakeApiServer bare = FakeApiServer.start();
             KubeClient server = KubeClient.create(new KubeClientOptions(bare.writeKubeconfig(dir.resolve("bare")), 1000, 1000))) {
            Kubectl late = new Kubectl(Kubectl.onPath().orElseThrow(), bare.writeKubeconfig(dir.resolve("bare")),
                    dir.resolve("kubectl-bare"));
            late.runWithInput("apiVersion: v1\nkind: Namespace\nmetadata: {name: shop}\n", "apply", "-f", "-").ok();
            GatewayDeploymentController controller = GatewayDeploymentController.forServer(server, "istio-system", "",
                    "Kubernetes", UnaryOperator.identity(), true, false, () -> new MeshConfigLoader().defaults()).orElseThrow(
                            () -> new AssertionError("no controller without the CRDs: " + log.lines()));
            assertEquals(List.of(), server.runAndWait(WAIT), "the server starts without the Gateway API CRDs");
            try (AutoCloseable leading = controller.lead()) {
                late.run("create", "-f", Path.of("src/test/resources/kube/gateway-api/standard").toAbsolutePath()
                        .toString()).ok();
                Await.until("kubectl sees Gateways", WAIT, () -> late.run("get", "gateways", "-A").exit() == 0);
                late.runWithInput(gateway("late", "shop", Map.of()), "apply", "-f", "-").ok();
                Await.until("the Deployment of a Gateway created after its CRD", WAIT,
                        () -> late.run("get", "deployment", "late-istio", "-n", "shop").exit() == 0);
                assertTrue(log.has("INFO", "CRD gateways.gateway.networking.k8s.io installed"), log.lines().toString());
            }
        }
    }
}
