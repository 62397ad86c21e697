package io.meshpilot.kube;

import java.nio.file.Path;

/**
 * How to reach the API server (istiod's kube.DefaultRestConfig and its --kubernetesApiQPS /
 * --kubernetesApiBurst).
 *
 * @param kubeconfig the kubeconfig file (--kubeconfig, else $KUBECONFIG); null: in-cluster
 *                   (service-account token, CA and KUBERNETES_SERVICE_HOST/PORT)
 * @param qps        requests per second the client may send on average (istiod: 80)
 * @param burst      requests it may send at once after a quiet time (istiod: 160)
 */
public record KubeClientOptions(Path kubeconfig, double qps, int burst) {
    public static final double DEFAULT_QPS = 80;
    public static final int DEFAULT_BURST = 160;

    public KubeClientOptions {
        if (!(qps > 0) || Double.isInfinite(qps)) {
            throw new IllegalArgumentException("--kubernetesApiQPS must be a positive number, not " + qps);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("--kubernetesApiBurst must be at least 1, not " + burst);
        }
    }

    /** Where the client connects, for logs. */
    public String describe() {
        return (kubeconfig == null ? "in-cluster" : "kubeconfig " + kubeconfig) + " qps=" + qps + " burst=" + burst;
    }
}
