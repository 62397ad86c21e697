package io.meshpilot.kube;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;

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
 * @param identity   this replica's name in leader-election Leases ($POD_NAME, as istiod; else the host name)
 * @param leaderElectionTtl how long a leader's Lease lasts unrenewed (istiod's 30s; tests shorten it through
 *                          $MESHPILOT_LEADER_ELECTION_TTL)
 * @param inCluster  with no kubeconfig: the API server and service account of the pod; null reads them
 *                   from the process environment and the kubelet's mount
 */
public record KubeClientOptions(Path kubeconfig, double qps, int burst, Duration syncTimeout, String identity,
                                Duration leaderElectionTtl, InClusterConfig inCluster) {
    public static final double DEFAULT_QPS = 80;
    public static final int DEFAULT_BURST = 160;
    public static final Duration DEFAULT_SYNC_TIMEOUT = Duration.ofSeconds(30);

    public KubeClientOptions(Path kubeconfig, double qps, int burst) {
        this(kubeconfig, qps, burst, DEFAULT_SYNC_TIMEOUT);
    }

    public KubeClientOptions(Path kubeconfig, double qps, int burst, Duration syncTimeout) {
        this(kubeconfig, qps, burst, syncTimeout, defaultIdentity(), ElectionTimings.ISTIOD_TTL);
    }

    public KubeClientOptions(Path kubeconfig, double qps, int burst, Duration syncTimeout, String identity,
                             Duration leaderElectionTtl) {
        this(kubeconfig, qps, burst, syncTimeout, identity, leaderElectionTtl, null);
    }

    /** The host name (a pod's name in a cluster), else a random name: two replicas must not share one. */
    public static String defaultIdentity() {
        try {
            return InetAddress.getLocalHost().getHostName() + "_" + UUID.randomUUID();
        } catch (IOException e) {
            return "meshpilot_" + UUID.randomUUID();
        }
    }

    public KubeClientOptions {
        if (!(qps > 0) || Double.isInfinite(qps)) {
            throw new IllegalArgumentException("--kubernetesApiQPS must be a positive number, not " + qps);
        }
        if (syncTimeout == null || syncTimeout.isNegative()) {
            throw new IllegalArgumentException("MESHPILOT_KUBE_SYNC_TIMEOUT must not be negative");
        }
        if (identity == null || identity.isBlank()) {
            identity = defaultIdentity();
        }
        if (leaderElectionTtl == null || leaderElectionTtl.compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("MESHPILOT_LEADER_ELECTION_TTL must be at least 1s, not " + leaderElectionTtl);
        }
        if (burst < 1) {
            throw new IllegalArgumentException("--kubernetesApiBurst must be at least 1, not " + burst);
        }
    }

    /** Where the client connects, for logs. */
    public String describe() {
        String where = kubeconfig != null ? "kubeconfig " + kubeconfig
                : inCluster != null ? "in-cluster, service account " + inCluster.serviceAccountDir() : "in-cluster";
        return where + " qps=" + qps + " burst=" + burst;
    }
}
