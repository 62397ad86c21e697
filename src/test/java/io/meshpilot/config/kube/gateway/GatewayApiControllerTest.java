package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.Port;
import io.meshpilot.api.networking.v1alpha3.Server;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigRevision;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.config.ConfigEvent;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.GeneratedConfigAnnotations;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.store.ConfigStoreException;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.kube.RevisionTags;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import io.meshpilot.util.LabelSelector;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The Gateway API controller against the API server stand-in with kubectl: Gateway API kinds are
 * watched once their CRDs are applied (istiod's delayed informers), not below istiod's
 * bundle-version minimum, objects of namespaces the discoverySelectors leave out are not read,
 * and what a conversion yields is served read-only, with events only for what changed. The
 * conversion is a hand-built function here: this checks the plumbing, whatever the rules.
 */
class GatewayApiControllerTest {
    static final Path CRDS = Path.of("src/test/resources/kube/gateway-api");

    @TempDir
    Path dir;
    FakeApiServer api;
    Kubectl kubectl;
    KubeClient client;
    GatewayApiController controller;
    /** The inputs of the last conversion. */
    final AtomicReference<GatewayApiInputs> lastInputs = new AtomicReference<>();
    /** How many conversions ran. */
    final AtomicInteger conversions = new AtomicInteger();
    /** What the next conversions return. */
    final AtomicReference<ConversionResult> nextResult = new AtomicReference<>(empty());
    /** What a conversion returns for its inputs: {@link #nextResult} unless a test decides by the inputs. */
    Function<GatewayApiInputs, ConversionResult> resultOf = inputs -> nextResult.get();
    final LinkedBlockingQueue<ConfigEvent> events = new LinkedBlockingQueue<>();

    static ConversionResult empty() {
        return new ConversionResult(List.of(), List.of(), List.of(), Map.of(), Map.of());
    }

    @BeforeEach
    void cluster() {
        api = FakeApiServer.start();
        kubectl = Kubectl.against(api, dir);
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Namespace
                metadata: {name: shop, labels: {mesh: "on"}}
                ---
                apiVersion: v1
                kind: Namespace
                metadata: {name: elsewhere}
                """, "apply", "-f", "-").ok();
    }

    @AfterEach
    void stop() {
        if (controller != null) {
            controller.close();
        }
        if (client != null) {
            client.close();
        }
        api.stop();
    }

    /** Starts the controller, on {@link #client} when a test created it first to register more informers. */
    void startController(GatewayApiRevision revision) throws Exception {
        if (client == null) {
            client = KubeClient.create(new KubeClientOptions(dir.resolve("kubeconfig"), 1000, 1000));
        }
        Function<GatewayApiInputs, ConversionResult> conversion = inputs -> {
            lastInputs.set(inputs);
            conversions.incrementAndGet();
            ConversionResult result = resultOf.apply(inputs);
            if (result == null) {
                throw new IllegalStateException("a conversion bug");
            }
            return result;
        };
        controller = new GatewayApiController(client, revision,
                GatewayApiInputs.Settings.defaults("cluster.local", "Kubernetes"), conversion);
        GatewayApiController.SERVED_KINDS.forEach(k -> controller.store().registerEventHandler(k, events::add));
        controller.store().run();
        assertEquals(List.of(), client.runAndWait(Duration.ofSeconds(20)));
        controller.store().synced().get();
    }

    void applyCrds(String channel) {
        kubectl.run("create", "-f", CRDS.resolve(channel).toAbsolutePath().toString()).ok();
    }

    static void await(String what, BooleanSupplier condition) throws InterruptedException {
        Await.until(what, Duration.ofSeconds(20), condition);
    }

    /** The objects of the last conversion, as kind/namespace/name. */
    List<String> converted() {
        GatewayApiInputs in = lastInputs.get();
        return in == null ? List.of() : in.objects().stream().map(o -> o.key().toString()).sorted().toList();
    }

    static final String ROUTE = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: HTTPRoute
            metadata: {name: %s, namespace: %s}
            spec:
              parentRefs: [{name: web}]
              rules: [{backendRefs: [{name: cart, port: 8080}]}]
            """;

    /** Lets Gateways of shop refer to the Secret elsewhere/shop-cert. */
    static final String SHOP_CERT_GRANT = """
            apiVersion: gateway.networking.k8s.io/v1beta1
            kind: ReferenceGrant
            metadata: {name: shop-gateways, namespace: elsewhere}
            spec:
              from: [{group: gateway.networking.k8s.io, kind: Gateway, namespace: shop}]
              to: [{group: "", kind: Secret, name: shop-cert}]
            """;

    @Test
    void crdsAppliedAfterStartStartTheirKindsAndTheirObjectsAreConverted() throws Exception {
        startController(GatewayApiRevision.DEFAULT);
        assertEquals(List.of(), controller.watching(), "no CRD, no kind");
        try (CapturedLog log = new CapturedLog(GatewayApiController.class)) {
            applyCrds("standard");
            await("every standard kind watched", () -> controller.watching().size() == GatewayApiKinds.RESOURCES.size());
            assertTrue(log.has("CRD httproutes.gateway.networking.k8s.io installed"), log.lines().toString());
        }
        assertTrue(controller.watching().contains("gateway.networking.k8s.io/v1beta1/referencegrants"),
                controller.watching().toString());
        kubectl.runWithInput(ROUTE.formatted("cart", "shop") + """
                ---
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: web, namespace: shop}
                spec:
                  gatewayClassName: istio
                  listeners:
                  - name: https
                    port: 443
                    protocol: HTTPS
                    tls: {certificateRefs: [{name: shop-cert}]}
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: shop-cert, namespace: shop}
                data: {tls.crt: Y2VydA==}
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: unrelated, namespace: shop}
                data: {token: c2VjcmV0}
                """, "apply", "-f", "-").ok();
        await("the route and gateway converted with the Secret", () -> converted().equals(
                List.of("Gateway/shop/web", "HTTPRoute/shop/cart")) && lastInputs.get().secret("shop", "shop-cert").isPresent());
        GatewayApiInputs in = lastInputs.get();
        GatewayApiObject route = in.ofKind(GatewayApiKinds.HTTP_ROUTE).getFirst();
        assertEquals("gateway.networking.k8s.io/v1", route.apiVersion());
        assertEquals("web", route.spec().getAsJsonArray("parentRefs").get(0).getAsJsonObject().get("name").getAsString());
        assertEquals(Map.of("mesh", "on"), in.namespaceLabels().get("shop"));
        // only the Secret a certificateRef names is in the snapshot
        assertEquals(List.of("cert"), in.secret("shop", "shop-cert").map(d -> List.of(new String(d.get("tls.crt")))).orElseThrow());
        assertTrue(in.secret("shop", "unrelated").isEmpty(), "unreferenced Secrets are not handed to the conversion");

        // the grants in force are published for SDS (a gateway's Secret in another namespace)
        assertFalse(controller.referenceGrants().allowed(GatewayApiKinds.GATEWAY, "shop", "", "Secret", "elsewhere", "shop-cert"));
        kubectl.runWithInput(SHOP_CERT_GRANT, "apply", "-f", "-").ok();
        await("the grant published", () -> controller.referenceGrants()
                .allowed(GatewayApiKinds.GATEWAY, "shop", "", "Secret", "elsewhere", "shop-cert"));
    }

    @Test
    void aCrdBelowIstiodsBundleVersionMinimumIsIgnoredWithItsWarningUntilUpgraded() throws Exception {
        startController(GatewayApiRevision.DEFAULT);
        String tcp = Files.readString(CRDS.resolve("standard/gateway.networking.k8s.io_tcproutes.yaml"));
        try (CapturedLog log = new CapturedLog(GatewayApiController.class)) {
            kubectl.runWithInput(tcp.replace("bundle-version: v1.6.0", "bundle-version: v1.5.1"), "create", "-f", "-").ok();
            await("the warning", () -> log.has("CRD tcproutes.gateway.networking.k8s.io version 1.5.1 is below minimum "
                    + "version 1.6.0 required by this Istio version; resources of this kind will not be processed. "
                    + "Upgrade the Gateway API CRDs to satisfy the minimum version."));
            assertEquals(List.of(), controller.watching());
            kubectl.runWithInput(tcp.replace("bundle-version: v1.6.0", "bundle-version: v1.6.0-rc.1"), "replace", "-f", "-").ok();
            await("TCPRoute watched once its CRD is 1.6.0 (a pre-release counts as its release)",
                    () -> controller.watching().equals(List.of("gateway.networking.k8s.io/v1/tcproutes")));
        }
    }

    @Test
    void objectsOfNamespacesTheDiscoverySelectorsLeaveOutAreNotRead() throws Exception {
        applyCrds("standard");
        kubectl.runWithInput(ROUTE.formatted("in", "shop") + "---\n" + ROUTE.formatted("out", "elsewhere"),
                "apply", "-f", "-").ok();
        startController(GatewayApiRevision.DEFAULT);
        await("both read without selectors", () -> converted().equals(List.of("HTTPRoute/elsewhere/out", "HTTPRoute/shop/in")));
        client.discoveryNamespaces().setSelectors(List.of(new LabelSelector(Map.of("mesh", "on"), List.of())));
        await("only the selected namespace's", () -> converted().equals(List.of("HTTPRoute/shop/in")));
        kubectl.run("label", "namespace", "elsewhere", "mesh=on").ok();
        await("the namespace joins", () -> converted().equals(List.of("HTTPRoute/elsewhere/out", "HTTPRoute/shop/in")));
    }

    @Test
    void routesOfAnotherRevisionAreNotRead() throws Exception {
        applyCrds("standard");
        kubectl.runWithInput(ROUTE.formatted("plain", "shop") + "---\n" + ROUTE.formatted("canary", "shop")
                .replace("namespace: shop}", "namespace: shop, labels: {istio.io/rev: canary}}") + "---\n"
                + ROUTE.formatted("mine", "shop").replace("namespace: shop}", "namespace: shop, labels: {istio.io/rev: stable}}"),
                "apply", "-f", "-").ok();
        startController(new GatewayApiRevision("stable", UnaryOperator.identity()));
        // istiod's LabelsInRevision: unlabelled objects are every revision's, labelled ones their revision's
        await("the unlabelled route and this revision's", () -> converted().equals(
                List.of("HTTPRoute/shop/mine", "HTTPRoute/shop/plain")));
    }

    static final String GATEWAY = """
            apiVersion: gateway.networking.k8s.io/v1
            kind: Gateway
            metadata: {name: %s, namespace: shop%s}
            spec:
              gatewayClassName: istio
              listeners: [{name: http, port: 80, protocol: HTTP}]
            """;

    /** A MutatingWebhookConfiguration as {@code istioctl tag set TAG --revision REVISION} writes it (labels only matter). */
    static String tagWebhook(String tag, String revision) {
        return """
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: istio-revision-tag-%s
                  labels: {istio.io/tag: %s, istio.io/rev: %s}
                """.formatted(tag, tag, revision);
    }

    boolean isMine(String gateway) {
        GatewayApiObject o = lastInputs.get().objects().stream().filter(g -> g.name().equals(gateway)).findFirst().orElseThrow();
        return controller.revision().isMine(o.labels(), controller.informers().namespaceLabels(o.namespace()));
    }

    @Test
    void gatewaysOfEveryRevisionAreConvertedAndOnlyOwnershipFollowsTheRevisionTheTagsAndTheDefaultTag() throws Exception {
        // istiod 86c9f01 controller.go buildClient: Gateways are filtered by discovery namespace
        // only; gateway_collection.go: IsMine is not applied where config is emitted (istio#59959)
        applyCrds("standard");
        kubectl.runWithInput(GATEWAY.formatted("plain", "") + "---\n" + GATEWAY.formatted("old", ", labels: {istio.io/rev: 1-27}")
                + "---\n" + GATEWAY.formatted("tagged", ", labels: {istio.io/rev: prod}"), "apply", "-f", "-").ok();
        client = KubeClient.create(new KubeClientOptions(dir.resolve("kubeconfig"), 1000, 1000));
        RevisionTags tags = RevisionTags.watch(client);
        try (tags) {
            startController(new GatewayApiRevision("1-28", tags, tags::defaultRevision));
            await("every revision's Gateway converted", () -> converted().equals(
                    List.of("Gateway/shop/old", "Gateway/shop/plain", "Gateway/shop/tagged")));
            // status is written only by the owner (pkg/revisions/tag_watcher.go IsMine)
            assertFalse(isMine("plain"), "unlabelled: the default revision's, and 1-28 is not it yet");
            assertFalse(isMine("old"));
            assertFalse(isMine("tagged"), "no tag prod yet");
            assertTrue(controller.revision().isMine(Map.of(), controller.informers().namespaceLabels("")),
                    "a cluster-scoped GatewayClass has no namespace: istiod counts an unknown namespace as mine");

            kubectl.runWithInput(tagWebhook("prod", "1-28") + "---\n" + tagWebhook("default", "1-28"), "apply", "-f", "-").ok();
            await("tag prod and the default tag point at 1-28", () -> isMine("tagged") && isMine("plain"));
            assertFalse(isMine("old"));

            // without a default tag, the default revision the validating webhook names owns unlabelled objects
            kubectl.run("delete", "mutatingwebhookconfiguration", "istio-revision-tag-default").ok();
            await("no default tag", () -> !isMine("plain"));
            kubectl.runWithInput("""
                    apiVersion: admissionregistration.k8s.io/v1
                    kind: ValidatingWebhookConfiguration
                    metadata: {name: istiod-default-validator, labels: {istio.io/rev: 1-28}}
                    """, "apply", "-f", "-").ok();
            await("1-28 is the default revision", () -> isMine("plain"));
            // a default tag pointing elsewhere takes precedence over the default revision
            kubectl.runWithInput(tagWebhook("default", "1-27"), "apply", "-f", "-").ok();
            await("the default tag points at 1-27", () -> !isMine("plain"));
            assertTrue(isMine("tagged"));
        }
    }

    static Config generatedGateway(String name, int port) {
        return new Config(Schemas.PILOT.forKind("Gateway").orElseThrow().gvk(), name, "shop", Map.of(),
                Map.of(GeneratedConfigAnnotations.PARENTS, "Gateway/shop/web"), "", 0, null,
                Gateway.newBuilder().addServers(Server.newBuilder().addHosts("*/shop.example.com")
                        .setPort(Port.newBuilder().setNumber(port)
                                .setProtocol("HTTP").setName("default"))).build(), null);
    }

    @Test
    void aResultIsServedReadOnlyWithEventsOnlyForWhatChangedAndItsProblemsListed() throws Exception {
        applyCrds("standard");
        // a generated name is not DNS-1123: it is served as built, never through the parser
        Config web = generatedGateway("web-istio-autogenerated-k8s-gateway-http", 80);
        nextResult.set(new ConversionResult(List.of(web), List.of(), List.of(), Map.of(),
                Map.of(new ConfigKey("HTTPRoute", "shop", "broken"), List.of("backend(missing.shop.svc.cluster.local) not found"))));
        startController(GatewayApiRevision.DEFAULT);
        assertEquals(1, controller.store().list("Gateway", "shop").size());
        ConfigEvent added = events.poll(20, TimeUnit.SECONDS);
        assertEquals(ConfigEvent.Type.ADD, added.type());
        assertEquals("web-istio-autogenerated-k8s-gateway-http", added.current().name());
        assertEquals(List.of(new DocumentError("kubernetes gateway.networking.k8s.io", 0, 0, "HTTPRoute", "shop", "broken", "",
                "backend(missing.shop.svc.cluster.local) not found")), controller.store().unconverted());

        ConfigStoreException.ReadOnly refused = assertThrows(ConfigStoreException.ReadOnly.class,
                () -> controller.store().delete("Gateway", "shop", web.name(), ""));
        assertTrue(refused.getMessage().contains("converted from Kubernetes Gateway API: change the Gateway API object instead"),
                refused.getMessage());
        assertThrows(ConfigStoreException.ReadOnly.class, () -> controller.store().create(generatedGateway("other", 81)));

        // an input change converts again to the same result: no event
        kubectl.runWithInput(ROUTE.formatted("again", "shop"), "apply", "-f", "-").ok();
        await("converted again", () -> converted().contains("HTTPRoute/shop/again"));
        assertTrue(controller.store().awaitEventsDelivered(20, TimeUnit.SECONDS));
        assertEquals(List.of(), List.copyOf(events), "nothing changed, nothing announced");

        // a changed object is an update; one no longer yielded is deleted
        nextResult.set(new ConversionResult(List.of(generatedGateway("web-istio-autogenerated-k8s-gateway-http", 8080)),
                List.of(), List.of(), Map.of(), Map.of()));
        controller.servicesChanged();
        ConfigEvent updated = events.poll(20, TimeUnit.SECONDS);
        assertEquals(ConfigEvent.Type.UPDATE, updated.type());
        await("the problem is gone", () -> controller.errors().isEmpty());
        nextResult.set(empty());
        controller.servicesChanged();
        assertEquals(ConfigEvent.Type.DELETE, events.poll(20, TimeUnit.SECONDS).type());
        assertFalse(controller.store().get("Gateway", "shop", web.name()).isPresent());
    }

    /**
     * SDS authorises a gateway's Secret of another namespace by the grants published with a
     * conversion, and the push a config event starts reads them: the grants a conversion read
     * are published before its config is served, and before the config they no longer allow is
     * withdrawn (istiod's SecretAllowed reads the grants its Gateways were derived from). Checked
     * when each event is delivered, over several grant changes.
     */
    @Test
    void theGrantsAConversionReadArePublishedBeforeTheConfigTheyAllowChanges() throws Exception {
        applyCrds("standard");
        Config https = generatedGateway("web-istio-autogenerated-k8s-gateway-https", 443);
        resultOf = inputs -> inputs.ofKind(GatewayApiKinds.REFERENCE_GRANT).isEmpty() ? empty()
                : new ConversionResult(List.of(https), List.of(), List.of(), Map.of(), Map.of());
        startController(GatewayApiRevision.DEFAULT);
        LinkedBlockingQueue<String> seen = new LinkedBlockingQueue<>();
        controller.store().registerEventHandler("Gateway", e -> seen.add(e.type() + " granted=" + controller
                .referenceGrants().allowed(GatewayApiKinds.GATEWAY, "shop", "", "Secret", "elsewhere", "shop-cert")));
        for (int i = 0; i < 5; i++) {
            kubectl.runWithInput(SHOP_CERT_GRANT, "apply", "-f", "-").ok();
            assertEquals("ADD granted=true", seen.poll(20, TimeUnit.SECONDS), "grant " + i);
            kubectl.run("delete", "referencegrant", "shop-gateways", "-n", "elsewhere").ok();
            assertEquals("DELETE granted=false", seen.poll(20, TimeUnit.SECONDS), "grant " + i + " deleted");
        }
    }

    @Test
    void onlyEndpointChangesOfTheServicesServingGatewaysConvertAgain() throws Exception {
        applyCrds("standard");
        Config web = generatedGateway("web-istio-autogenerated-k8s-gateway-http", 80);
        Map<String, String> annotations = new HashMap<>(web.annotations());
        annotations.put(GeneratedConfigAnnotations.GATEWAY_SERVICE, "web-istio.shop.svc.cluster.local");
        nextResult.set(new ConversionResult(List.of(web.withAnnotations(annotations)), List.of(), List.of(), Map.of(), Map.of()));
        startController(GatewayApiRevision.DEFAULT);
        controller.barrier().get();
        int before = conversions.get();
        controller.gatewayServiceChanged("cart.shop.svc.cluster.local");
        controller.barrier().get();
        assertEquals(before, conversions.get(), "another service's endpoints do not matter to the conversion");
        controller.gatewayServiceChanged("web-istio.shop.svc.cluster.local");
        controller.barrier().get();
        assertEquals(before + 1, conversions.get(), "the gateway's service's endpoints convert again");
    }

    @Test
    void theBackendClientCertificateSecretIsHandedToTheConversionAndItsChangesConvertAgain() throws Exception {
        // istiod conversion.go validateBackendClientCertificateRef reads it from the Secrets collection
        applyCrds("standard");
        kubectl.runWithInput("""
                apiVersion: gateway.networking.k8s.io/v1
                kind: Gateway
                metadata: {name: web, namespace: shop}
                spec:
                  gatewayClassName: istio
                  tls: {backend: {clientCertificateRef: {name: client-cert}}}
                  listeners: [{name: http, port: 80, protocol: HTTP}]
                ---
                apiVersion: v1
                kind: Secret
                metadata: {name: client-cert, namespace: shop}
                data: {tls.crt: Y2VydA==}
                """, "apply", "-f", "-").ok();
        startController(GatewayApiRevision.DEFAULT);
        await("the client certificate Secret in the snapshot", () -> lastInputs.get().secret("shop", "client-cert")
                .map(d -> new String(d.get("tls.crt"))).orElse("").equals("cert"));
        kubectl.runWithInput("""
                apiVersion: v1
                kind: Secret
                metadata: {name: client-cert, namespace: shop}
                data: {tls.crt: bmV3}
                """, "apply", "-f", "-").ok();
        await("its change converted", () -> lastInputs.get().secret("shop", "client-cert")
                .map(d -> new String(d.get("tls.crt"))).orElse("").equals("new"));
    }

    @Test
    void aConversionThatThrowsKeepsTheLastGoodConfigServed() throws Exception {
        applyCrds("standard");
        nextResult.set(new ConversionResult(List.of(generatedGateway("kept", 80)), List.of(), List.of(),
                Map.of(), Map.of()));
        startController(GatewayApiRevision.DEFAULT);
        nextResult.set(null); // the conversion then throws
        try (CapturedLog log = new CapturedLog(GatewayApiController.class)) {
            kubectl.runWithInput(ROUTE.formatted("trigger", "shop"), "apply", "-f", "-").ok();
            await("the failure logged", () -> log.has("gateway api conversion of 1 objects failed, the config of the last one stays served"));
        }
        assertTrue(controller.store().get("Gateway", "shop", "kept").isPresent());
    }

    @Test
    void behindTheAggregateTheResultIsListedItsProblemsAreConfigErrorsAndWritesAreRefused() throws Exception {
        applyCrds("standard");
        client = KubeClient.create(new KubeClientOptions(dir.resolve("kubeconfig"), 1000, 1000));
        Config web = generatedGateway("web-istio-autogenerated-k8s-gateway-http", 80);
        controller = new GatewayApiController(client, GatewayApiRevision.DEFAULT,
                GatewayApiInputs.Settings.defaults("cluster.local", "Kubernetes"),
                inputs -> new ConversionResult(List.of(web), List.of(), List.of(), Map.of(),
                        Map.of(new ConfigKey("HTTPRoute", "shop", "broken"), List.of("backend(missing) not found"))));
        try (ConfigController configs = new ConfigController(new ConfigController.Sources(null, null, true),
                new Readiness(), client, true, ConfigRevision.ANY)) {
            configs.serveGatewayApi(controller);
            configs.start();
            client.start();
            configs.run(Duration.ofSeconds(20));
            // what /debug/configz and the config API list
            assertEquals(List.of(web.name()), configs.store().list("Gateway", "shop").stream().map(Config::name).toList());
            assertTrue(configs.errors().stream().anyMatch(e -> e.kind().equals("HTTPRoute") && e.name().equals("broken")
                    && e.reason().equals("backend(missing) not found")), configs.errors().toString());
            // the aggregate sends writes to the cluster's store, which has no such object: the generated one is untouched
            assertThrows(ConfigStoreException.class, () -> configs.store().delete("Gateway", "shop", web.name(), ""));
            assertTrue(configs.store().get("Gateway", "shop", web.name()).isPresent());
        }
        controller = null; // closed with the config controller
    }
}
