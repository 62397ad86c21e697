package io.meshpilot.testing.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.JsonObject;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * networking.k8s.io/v1 Ingress (namespaced, with a status subresource) and IngressClass
 * (cluster-scoped) on the stand-in, through the kubectl on the PATH: apply, get, and a status
 * written through the subresource while a spec change there is ignored, as on a real server.
 */
class FakeApiServerIngressTest {
    @TempDir
    Path dir;

    @Test
    void kubectlAppliesIngressAndIngressClassAndWritesIngressStatus() {
        Path binary = Kubectl.onPath().orElseThrow(() -> new AssertionError("kubectl is not on the PATH"));
        try (FakeApiServer server = FakeApiServer.start()) {
            Kubectl kubectl = new Kubectl(binary, server.writeKubeconfig(dir), dir.resolve("kubectl"));
            kubectl.run("create", "namespace", "shop").ok();
            kubectl.runWithInput("""
                    apiVersion: networking.k8s.io/v1
                    kind: IngressClass
                    metadata: {name: nginx}
                    spec: {controller: k8s.io/ingress-nginx}
                    ---
                    apiVersion: networking.k8s.io/v1
                    kind: Ingress
                    metadata: {name: web, namespace: shop}
                    spec:
                      ingressClassName: nginx
                      defaultBackend: {service: {name: web, port: {number: 80}}}
                    """, "apply", "-f", "-").ok();
            JsonObject ingressClass = server.get("networking.k8s.io/v1", "IngressClass", null, "nginx").orElseThrow();
            assertEquals("k8s.io/ingress-nginx", Json.string(ingressClass, "spec", "controller"));
            String got = kubectl.run("-n", "shop", "get", "ingress", "web", "-o",
                    "jsonpath={.spec.defaultBackend.service.name}").ok().stdout();
            assertEquals("web", got);

            kubectl.run("-n", "shop", "patch", "ingress", "web", "--subresource=status", "--type=merge", "-p",
                    "{\"spec\":{\"ingressClassName\":\"other\"},"
                            + "\"status\":{\"loadBalancer\":{\"ingress\":[{\"ip\":\"203.0.113.7\"}]}}}").ok();
            JsonObject ingress = server.get("networking.k8s.io/v1", "Ingress", "shop", "web").orElseThrow();
            assertEquals("203.0.113.7", ingress.getAsJsonObject("status").getAsJsonObject("loadBalancer")
                    .getAsJsonArray("ingress").get(0).getAsJsonObject().get("ip").getAsString());
            assertEquals("nginx", Json.string(ingress, "spec", "ingressClassName"), "status writes leave the spec alone");
            String listed = kubectl.run("get", "ingressclasses", "-o", "name").ok().stdout();
            assertTrue(listed.contains("ingressclass.networking.k8s.io/nginx"), listed);
        }
    }
}
