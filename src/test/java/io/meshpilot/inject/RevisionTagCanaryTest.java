package io.meshpilot.inject;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.kube.RevisionTags;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.InjectWebhookCalls;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import io.meshpilot.testing.kube.Kubectl;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A canary upgrade with revision tags, as the revision docs and {@code istioctl tag set} do it,
 * against the API server stand-in with kubectl: the namespace {@code shop} is labelled
 * {@code istio.io/rev=prod}; the tag webhook {@code istio-revision-tag-prod} points at revision
 * {@code a}, then is moved to {@code b}. Revision {@code a} is a server started with istiod's
 * {@code REVISION} environment, called over its webhook listener; revision {@code b} is the
 * injector as that server builds it (tags watched through its own client), in this JVM, as
 * only one server per JVM hosts the HTTP listeners.
 */
class RevisionTagCanaryTest {
    private static final String INSTALL = """
            apiVersion: v1
            kind: Namespace
            metadata: {name: istio-system}
            ---
            apiVersion: v1
            kind: Namespace
            metadata: {name: shop, labels: {istio.io/rev: prod}}
            ---
            %s
            ---
            %s
            ---
            %s
            """.formatted(webhook("istio-sidecar-injector-a", "a", null), webhook("istio-sidecar-injector-b", "b", null),
            webhook("istio-revision-tag-prod", "a", "prod"));

    @TempDir
    Path dir;

    /** A revision's injector webhook (tag null) or a tag's, as istiod's chart and istioctl write them. */
    static String webhook(String name, String revision, String tag) {
        return """
                apiVersion: admissionregistration.k8s.io/v1
                kind: MutatingWebhookConfiguration
                metadata:
                  name: %s
                  labels: {istio.io/rev: %s%s}
                webhooks:
                - name: rev.namespace.sidecar-injector.istio.io
                  clientConfig:
                    service: {name: istiod-%s, namespace: istio-system, path: /inject, port: 443}
                  namespaceSelector:
                    matchExpressions:
                    - {key: istio.io/rev, operator: In, values: [%s]}
                  admissionReviewVersions: [v1]
                  sideEffects: None
                """.formatted(name, revision, tag == null ? "" : ", istio.io/tag: " + tag, revision,
                tag == null ? revision : tag);
    }

    @Test
    void newPodsFollowTheTagFromRevisionAToRevisionB() throws Exception {
        Optional<Path> binary = Kubectl.onPath();
        Assumptions.assumeTrue(binary.isPresent(), "no kubectl on the PATH");
        try (FakeApiServer api = FakeApiServer.start(); CapturedLog log = new CapturedLog(RevisionTags.class)) {
            api.installIstioCrds();
            Path kubeconfig = api.writeKubeconfig(dir);
            Kubectl kubectl = new Kubectl(binary.get(), kubeconfig, dir.resolve("kubectl"));
            kubectl.runWithInput(INSTALL, "apply", "-f", "-").ok();
            Files.createDirectories(dir.resolve("config"));
            List<String> flags = new ArrayList<>(TestServers.flags(dir, "--kubeconfig", kubeconfig.toString(),
                    "--registries", "Mock"));
            try (MeshPilotServer revisionA = MeshPilotServer.start(TestServers.args(flags, Map.of("REVISION", "a")));
                 KubeClient clientB = KubeClient.create(new KubeClientOptions(kubeconfig, 1000, 1000));
                 RevisionTags tagsB = RevisionTags.watch(clientB)) {
                var namespacesB = clientB.discoveryNamespaces().informer().getIndexer();
                SidecarInjector revisionB = new SidecarInjector(SidecarInjector.Settings::defaults,
                        new MeshConfigLoader()::defaults, "b", false, ns -> {
                            var n = namespacesB.getByKey(ns);
                            return n == null ? null : n.getMetadata().getLabels();
                        }, tagsB);
                assertTrue(clientB.runAndWait(Duration.ofSeconds(20)).isEmpty(), "revision b's informers synced");
                HttpClient client = InjectWebhookCalls.tlsClientFor(revisionA, "istiod.istio-system.svc");
                int webhook = revisionA.ports().get("webhook");
                JsonObject pod = SidecarInjectionTableTest.hello();
                pod.getAsJsonObject("metadata").addProperty("namespace", "shop");

                // prod -> a: a injects the pod, b leaves it alone
                Await.until("revision a injects shop's pods", Duration.ofSeconds(20),
                        () -> injectedRevision(client, webhook, pod).equals("a"));
                assertEquals(SidecarInjector.Kind.SKIPPED, revisionB.inject(pod, "shop", "/inject").kind());
                assertEquals(Map.of("prod", "a"), tagsB.tags());

                // istioctl tag set prod --revision b --overwrite
                kubectl.run("label", "mutatingwebhookconfiguration", "istio-revision-tag-prod", "istio.io/rev=b",
                        "--overwrite").ok();
                Await.until("revision b injects shop's pods", Duration.ofSeconds(20),
                        () -> revisionB.inject(pod, "shop", "/inject").kind() == SidecarInjector.Kind.INJECTED);
                Await.until("revision a no longer injects them", Duration.ofSeconds(20),
                        () -> injectedRevision(client, webhook, pod).isEmpty());
                JsonObject injectedByB = SidecarInjectionTableTest.apply(pod, revisionB.inject(pod, "shop", "/inject").patch());
                assertEquals("b", injectedByB.getAsJsonObject("metadata").getAsJsonObject("annotations")
                        .get("istio.io/rev").getAsString());

                // a tag pointing at a revision no injector webhook serves is reported with the
                // webhook's name, the tag, the revision and why
                kubectl.runWithInput(webhook("istio-revision-tag-old", "zz", "old"), "apply", "-f", "-").ok();
                Await.until("the unknown revision is reported", Duration.ofSeconds(20),
                        () -> log.has("WARNING", "MutatingWebhookConfiguration istio-revision-tag-old: revision tag old"
                                + " points at revision zz, which no injector webhook serves"));
                // the line may come from revision a's watch first: b's sees the new tag in its own time
                Await.until("revision b sees the tag old", Duration.ofSeconds(20), () -> tagsB.apply("old").equals("zz"));
                assertEquals("b", tagsB.apply("prod"), "the other tags are untouched");
                assertEquals(SidecarInjector.Kind.INJECTED, revisionB.inject(pod, "shop", "/inject").kind(),
                        "revision b still injects the namespaces on its tags");
                assertEquals("", injectedRevision(client, webhook, pod), "and revision a still leaves them alone");
            }
        }
    }

    /** The revision whose injection /inject answered with ("" when the pod was left alone). */
    private static String injectedRevision(HttpClient client, int port, JsonObject pod) {
        try {
            JsonObject response = InjectWebhookCalls.response(InjectWebhookCalls.post(client, port, "/inject",
                    "application/json", InjectWebhookCalls.review("canary-1", "shop", pod)));
            if (!response.has("patch")) {
                assertNull(response.get("status"), response.toString());
                return "";
            }
            JsonObject injected = InjectWebhookCalls.admitted(pod, response);
            return JsonParser.parseString(injected.getAsJsonObject("metadata").getAsJsonObject("annotations")
                    .get(SidecarInjector.STATUS).getAsString()).getAsJsonObject().get("revision").getAsString();
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }
}
