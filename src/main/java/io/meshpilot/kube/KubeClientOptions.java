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
 * @param syncTimeout how long start-up waits for the informers' first list before going on
 *                    not ready ($MESHPILOT_KUBE_SYNC_TIMEOUT, default 30s)
 */
public record KubeClientOptions(Path kubeconfig, double qps, int burst, java.time.Duration syncTimeout) {
    public static final double DEFAULT_QPS = 80;
    public static final int DEFAULT_BURST = 160;
    public static final java.time.Duration DEFAULT_SYNC_TIMEOUT = java.time.Duration.ofSeconds(30);

    public KubeClientOptions(Path kubeconfig, double qps, int burst) {
        this(kubeconfig, qps, burst, DEFAULT_SYNC_TIMEOUT);
    }

    public KubeClientOptions {
        if (!(qps > 0) || Double.isInfinite(qps)) {
            throw new IllegalArgumentException("--kubernetesApiQPS must be a positive number, not " + qps);
        }
        if (syncTimeout == null || syncTimeout.isNegative()) {
            throw new IllegalArgumentException("MESHPILOT_KUBE_SYNC_TIMEOUT must not be negative");
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
