package io.meshpilot.testing.kube;

import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;

/**
 * {@code bin/kube-sandbox}: the API server stand-in as a long-running process for a developer's
 * laptop, with Istio's CRDs and the istio-system namespace installed and a kubeconfig written,
 * until interrupted.
 *
 * <pre>KubeSandbox [--port 6443] [--dir var/kube-sandbox]</pre>
 */
public final class KubeSandbox {
    private KubeSandbox() {
    }

    public static void main(String[] args) throws InterruptedException {
        int port = 6443;
        Path dir = Path.of("var/kube-sandbox");
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(value(args, ++i, "--port"));
                case "--dir" -> dir = Path.of(value(args, ++i, "--dir"));
                default -> {
                    System.err.println("kube-sandbox: unknown argument " + args[i]
                            + " (usage: bin/kube-sandbox [--port 6443] [--dir var/kube-sandbox])");
                    System.exit(2);
                }
            }
        }
        FakeApiServer server;
        try {
            server = FakeApiServer.start(port);
        } catch (UncheckedIOException e) {
            System.err.println("kube-sandbox: " + e.getMessage() + " (" + e.getCause().getMessage()
                    + "); choose another with --port");
            System.exit(1);
            return;
        }
        server.installIstioCrds();
        // as an Istio install does first: istiod keeps its CA root there, and will not start without it
        server.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        Path kubeconfig = server.writeKubeconfig(dir.toAbsolutePath());
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }));
        System.out.printf("""
                Kubernetes API server stand-in on %1$s: Istio CRDs installed, objects in memory.
                kubeconfig: %2$s

                  export KUBECONFIG=%2$s
                  kubectl get crds
                  kubectl apply -f src/test/resources/golden/samples/bookinfo-kube.yaml
                  kubectl apply -f src/test/resources/golden/samples/bookinfo-gateway.yaml
                  bin/pilot-discovery discovery --registries Kubernetes --kubeconfig %2$s

                It runs no controllers: Deployments make no Pods, Services no EndpointSlices (apply them
                yourself, with status.podIP on Pods). Ctrl-C stops it and forgets everything.
                """, server.url(), kubeconfig);
        System.out.flush();
        stopped.await();
    }

    private static String value(String[] args, int i, String flag) {
        if (i >= args.length) {
            System.err.println("kube-sandbox: " + flag + " needs a value");
            System.exit(2);
        }
        return args[i];
    }
}
