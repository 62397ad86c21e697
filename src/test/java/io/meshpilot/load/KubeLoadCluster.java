package io.meshpilot.load;

import io.meshpilot.testing.kube.FakeApiServer;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The cluster of {@code bin/load --kubernetes} ({@link KubeLoad}): the API server stand-in in a
 * process of its own (so that its CPU is measured apart from the server's and the tool's),
 * with Istio's CRDs and S Services, each with one EndpointSlice of E endpoints, E Pods and
 * spread over a hundred Nodes, loaded straight into its store: loading is not what is measured.
 * It prints its port and kubeconfig, then serves until its standard input ends.
 *
 * <pre>KubeLoadCluster SERVICES ENDPOINTS DIR</pre>
 *
 * <p>Service {@code svc-<s>} in {@code default} has port 8080 named {@code http}; its slice
 * {@code svc-<s>} starts on endpoint port 8080 ({@link #slicePatch} moves it); pod
 * {@code svc-<s>-<e>} has IP {@link #podIp}.
 */
public final class KubeLoadCluster {
    static final int NODES = 100;
    /** Objects per apply: big enough that YAML parsing per call is cheap, small enough to stream. */
    private static final int SERVICES_PER_BATCH = 50;

    private KubeLoadCluster() {
    }

    public static void main(String[] args) throws Exception {
        int services = Integer.parseInt(args[0]);
        int endpoints = Integer.parseInt(args[1]);
        Path dir = Path.of(args[2]);
        long t0 = System.nanoTime();
        FakeApiServer api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n"); // istiod's namespace, where the CA root is kept
        StringBuilder nodes = new StringBuilder();
        for (int n = 0; n < NODES; n++) {
            nodes.append(node(n));
        }
        api.apply(nodes.toString());
        for (int from = 0; from < services; from += SERVICES_PER_BATCH) {
            StringBuilder y = new StringBuilder();
            for (int s = from; s < Math.min(services, from + SERVICES_PER_BATCH); s++) {
                y.append(service(s)).append(slice(s, endpoints));
                for (int e = 0; e < endpoints; e++) {
                    y.append(pod(s, e, endpoints));
                }
            }
            api.apply(y.toString());
        }
        Path kubeconfig = api.writeKubeconfig(dir);
        System.out.printf("kube-load cluster: port=%d kubeconfig=%s objects=%d loaded in %d ms%n", api.port(), kubeconfig,
                NODES + services * (2L + endpoints), (System.nanoTime() - t0) / 1_000_000);
        System.out.flush();
        // the tool closes our input when it is done (or dies)
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).transferTo(Writer.nullWriter());
        api.close();
        System.exit(0);
    }

    static String node(int n) {
        return """
                {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%1$d", "labels": {\
                "topology.kubernetes.io/region": "region-1", "topology.kubernetes.io/zone": "zone-%2$d"}}}
                ---
                """.formatted(n, n % 3);
    }

    static String service(int s) {
        return """
                {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc-%1$d", "namespace": "default"}, \
                "spec": {"clusterIP": "10.96.%2$d.%3$d", "selector": {"app": "svc-%1$d"}, \
                "ports": [{"name": "http", "port": 8080, "targetPort": "http", "protocol": "TCP"}]}}
                ---
                """.formatted(s, s / 250, s % 250 + 1);
    }

    static String slice(int s, int endpoints) {
        StringBuilder eps = new StringBuilder();
        for (int e = 0; e < endpoints; e++) {
            eps.append(e == 0 ? "" : ", ").append("""
                    {"addresses": ["%s"], "conditions": {"ready": true}, "nodeName": "node-%d", \
                    "targetRef": {"kind": "Pod", "namespace": "default", "name": "svc-%d-%d"}}""".formatted(
                    podIp(s, e, endpoints), node(s, e), s, e));
        }
        return """
                {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice", "metadata": {"name": "svc-%1$d", \
                "namespace": "default", "labels": {"kubernetes.io/service-name": "svc-%1$d"}}, "addressType": "IPv4", \
                "ports": [{"name": "http", "port": 8080, "protocol": "TCP"}], "endpoints": [%2$s]}
                ---
                """.formatted(s, eps);
    }

    static String pod(int s, int e, int endpoints) {
        return """
                {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "svc-%1$d-%2$d", "namespace": "default", \
                "labels": {"app": "svc-%1$d", "version": "v1"}}, "spec": {"serviceAccountName": "svc-%1$d", \
                "nodeName": "node-%3$d", "containers": [{"name": "app", "image": "app"}]}, \
                "status": {"phase": "Running", "podIP": "%4$s", "conditions": [{"type": "Ready", "status": "True"}]}}
                ---
                """.formatted(s, e, node(s, e), podIp(s, e, endpoints));
    }

    /** The merge patch that moves every endpoint of a slice to {@code port}. */
    static String slicePatch(int port) {
        return "{\"ports\": [{\"name\": \"http\", \"port\": " + port + ", \"protocol\": \"TCP\"}]}";
    }

    static int node(int s, int e) {
        return (s * 7 + e) % NODES;
    }

    /** 10.(1+n/65536).(n/256).(n%256) for the n-th pod: unique up to 16 million pods. */
    static String podIp(int s, int e, int endpoints) {
        long n = (long) s * endpoints + e + 1;
        return "10." + (1 + n / 65536) + "." + (n / 256 % 256) + "." + (n % 256);
    }
}
