package io.meshpilot.networking;

import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.List;
import java.util.Map;

/**
 * A synthetic mesh of N services for scale tests and benchmarks, applied as Istio YAML through
 * the real validating store and ServiceEntry registry ({@link MeshFixture}). Deterministic:
 * the same N gives the same config.
 * <ul>
 * <li>service {@code i} is {@code svc-i.ns-(i % 10).svc.cluster.local}, a MESH_INTERNAL STATIC
 * ServiceEntry with a VIP ({@link #vip}), HTTP port 8080 named {@code http}; every third
 * ({@code i % 3 == 1}) also TCP 9000, every third ({@code i % 3 == 2}) also gRPC 9090;</li>
 * <li>each selects two WorkloadEntries ({@link #workloadIp}) labelled {@code app: svc-i},
 * {@code version: v1|v2} and {@code security.istio.io/tlsMode: istio};</li>
 * <li>every fifth ({@code i % 5 == 0}, 20%) has a VirtualService (header match, 80/20 subset
 * split, timeout, retries) and a DestinationRule (subsets v1 and v2, connection pool, outlier
 * detection, ISTIO_MUTUAL).</li>
 * </ul>
 * Use {@code try (GeneratedMesh mesh = GeneratedMesh.of(1000)) { mesh.push() ... }}.
 */
public final class GeneratedMesh implements AutoCloseable {
    public static final int NAMESPACES = 10;
    public static final int HTTP_PORT = 8080;
    public static final int TCP_PORT = 9000;
    public static final int GRPC_PORT = 9090;

    private final int services;
    private final MeshFixture fixture;
    private final PushContext push;

    private GeneratedMesh(int services, MeshFixture fixture) {
        this.services = services;
        this.fixture = fixture;
        this.push = fixture.push();
    }

    /** Builds the mesh of {@code services} services through a new {@link MeshFixture}. */
    public static GeneratedMesh of(int services) throws Exception {
        if (services < 1 || services > 60_000) {
            throw new IllegalArgumentException("1..60000 services (VIPs and IPs are numbered in two octets)");
        }
        MeshFixture fixture = new MeshFixture();
        try {
            fixture.apply(yaml(services));
            return new GeneratedMesh(services, fixture);
        } catch (Exception | Error e) {
            fixture.close();
            throw e;
        }
    }

    public int services() {
        return services;
    }

    public MeshFixture fixture() {
        return fixture;
    }

    /** The PushContext of the whole mesh, built once (version 1). */
    public PushContext push() {
        return push;
    }

    public static String namespace(int service) {
        return "ns-" + service % NAMESPACES;
    }

    public static String hostname(int service) {
        return "svc-" + service + "." + namespace(service) + ".svc.cluster.local";
    }

    public static boolean hasTcpPort(int service) {
        return service % 3 == 1;
    }

    public static boolean hasGrpcPort(int service) {
        return service % 3 == 2;
    }

    /** Whether the service has a VirtualService and a DestinationRule (20% of them). */
    public static boolean hasRules(int service) {
        return service % 5 == 0;
    }

    public static int ports(int service) {
        return hasTcpPort(service) || hasGrpcPort(service) ? 2 : 1;
    }

    /** The service's VIP: TCP ports get one listener per VIP and port, as in Kubernetes. */
    public static String vip(int service) {
        return "240.240." + service / 250 + "." + (service % 250 + 1);
    }

    /** Address of the service's workload of version {@code version} (1 or 2). */
    public static String workloadIp(int service, int version) {
        return "10." + version + "." + service / 250 + "." + (service % 250 + 1);
    }

    /**
     * A sidecar of the service's workload {@code version} (1 or 2), as Proxy.fromNode makes it
     * from the node istio-agent sends.
     */
    public static Proxy sidecar(int service, int version) {
        String ip = workloadIp(service, version);
        String ns = namespace(service);
        String workload = "svc-" + service + "-v" + version + "." + ns;
        return new Proxy("sidecar~" + ip + "~" + workload + "~" + ns + ".svc.cluster.local", Proxy.Type.SIDECAR,
                List.of(ip), workload, ns + ".svc.cluster.local", ns, labels(service, version), "Kubernetes",
                "1.24.0", "", "svc-" + service, "", Locality.NONE);
    }

    public static Map<String, String> labels(int service, int version) {
        return Map.of("app", "svc-" + service, "version", "v" + version, "security.istio.io/tlsMode", "istio");
    }

    /** The whole mesh as one multi-document YAML. */
    public static String yaml(int services) {
        StringBuilder y = new StringBuilder(services * 1200);
        for (int i = 0; i < services; i++) {
            serviceEntry(y, i);
            for (int v = 1; v <= 2; v++) {
                workloadEntry(y, i, v);
            }
            if (hasRules(i)) {
                virtualService(y, i);
                destinationRule(y, i);
            }
        }
        return y.toString();
    }

    private static void serviceEntry(StringBuilder y, int i) {
        y.append("apiVersion: networking.istio.io/v1\nkind: ServiceEntry\n")
                .append("metadata: {name: svc-").append(i).append(", namespace: ").append(namespace(i)).append("}\n")
                .append("spec:\n  hosts: [").append(hostname(i)).append("]\n  addresses: [").append(vip(i))
                .append("]\n  location: MESH_INTERNAL\n  resolution: STATIC\n  ports:\n")
                .append("  - {number: ").append(HTTP_PORT).append(", name: http, protocol: HTTP}\n");
        if (hasTcpPort(i)) {
            y.append("  - {number: ").append(TCP_PORT).append(", name: tcp-db, protocol: TCP}\n");
        }
        if (hasGrpcPort(i)) {
            y.append("  - {number: ").append(GRPC_PORT).append(", name: grpc, protocol: GRPC}\n");
        }
        y.append("  workloadSelector: {labels: {app: svc-").append(i).append("}}\n---\n");
    }

    private static void workloadEntry(StringBuilder y, int i, int version) {
        y.append("apiVersion: networking.istio.io/v1\nkind: WorkloadEntry\n")
                .append("metadata: {name: svc-").append(i).append("-v").append(version).append(", namespace: ")
                .append(namespace(i)).append("}\n")
                .append("spec: {address: ").append(workloadIp(i, version)).append(", serviceAccount: svc-").append(i)
                .append(", labels: {app: svc-").append(i).append(", version: v").append(version)
                .append(", security.istio.io/tlsMode: istio}}\n---\n");
    }

    private static void virtualService(StringBuilder y, int i) {
        String host = hostname(i);
        y.append("apiVersion: networking.istio.io/v1\nkind: VirtualService\n")
                .append("metadata: {name: svc-").append(i).append(", namespace: ").append(namespace(i)).append("}\n")
                .append("spec:\n  hosts: [").append(host).append("]\n  http:\n")
                .append("  - match: [{headers: {end-user: {exact: jason}}}]\n")
                .append("    route: [{destination: {host: ").append(host).append(", subset: v2}}]\n")
                .append("    timeout: 3s\n")
                .append("  - route:\n")
                .append("    - {destination: {host: ").append(host).append(", subset: v1}, weight: 80}\n")
                .append("    - {destination: {host: ").append(host).append(", subset: v2}, weight: 20}\n")
                .append("    timeout: 5s\n")
                .append("    retries: {attempts: 3, perTryTimeout: 2s, retryOn: \"5xx,connect-failure\"}\n---\n");
    }

    private static void destinationRule(StringBuilder y, int i) {
        y.append("apiVersion: networking.istio.io/v1\nkind: DestinationRule\n")
                .append("metadata: {name: svc-").append(i).append(", namespace: ").append(namespace(i)).append("}\n")
                .append("spec:\n  host: ").append(hostname(i)).append("\n  trafficPolicy:\n")
                .append("    connectionPool:\n      tcp: {maxConnections: 100, connectTimeout: 2s}\n")
                .append("      http: {http1MaxPendingRequests: 64, maxRequestsPerConnection: 10}\n")
                .append("    outlierDetection: {consecutive5xxErrors: 5, interval: 10s, baseEjectionTime: 30s}\n")
                .append("    tls: {mode: ISTIO_MUTUAL}\n")
                .append("  subsets:\n  - {name: v1, labels: {version: v1}}\n  - {name: v2, labels: {version: v2}}\n---\n");
    }

    @Override
    public void close() {
        fixture.close();
    }
}
