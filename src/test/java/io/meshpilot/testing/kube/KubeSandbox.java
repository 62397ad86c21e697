package io.meshpilot.testing.kube;

import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/kube-sandbox}: the API server stand-in as a long-running process for a developer's
 * laptop, with Istio's CRDs installed and a kubeconfig written, until interrupted.
 *
 * <pre>KubeSandbox [port] [kubeconfig-dir]</pre>
 */
public final class KubeSandbox {
    private KubeSandbox() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 6443;
        Path dir = Path.of(args.length > 1 ? args[1] : "var/kube-sandbox").toAbsolutePath();
        FakeApiServer server = FakeApiServer.start(port);
        server.installIstioCrds();
        Path kubeconfig = server.writeKubeconfig(dir);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.printf("""
                Kubernetes API server stand-in listening on %1$s (Istio CRDs installed; objects in memory).
                kubeconfig: %2$s

                  export KUBECONFIG=%2$s
                  kubectl get crds
                  kubectl apply -f ../shared/samples/bookinfo/bookinfo-kube.yaml
                  kubectl apply -f ../shared/samples/bookinfo/bookinfo-gateway.yaml
                  bin/pilot-discovery discovery --registries Kubernetes --kubeconfig %2$s

                The stand-in runs no controllers: Deployments make no Pods, Services no EndpointSlices;
                apply those yourself. Ctrl-C stops it (and forgets everything).
                """, server.url(), kubeconfig);
        System.out.flush();
        stopped.await();
    }
}
