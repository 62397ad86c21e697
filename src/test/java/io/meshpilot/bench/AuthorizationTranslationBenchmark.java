package io.meshpilot.bench;

import io.envoyproxy.envoy.config.listener.v3.Listener;
import io.meshpilot.model.Locality;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.MeshFixture;
import io.meshpilot.networking.authz.AuthorizationFilters;
import io.meshpilot.networking.envoy.SidecarInboundListenerBuilder;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * AuthorizationPolicy translation for one sidecar whose namespace holds N policies selecting
 * it (a mix of ALLOW and DENY with principals, namespaces, methods, paths, ports, IP blocks
 * and header conditions). {@code filters}: the RBAC filters of its HTTP and TCP chains, built
 * from the policies; {@code inboundListener}: its whole {@code virtualInbound} listener
 * (HTTP 8000 and TCP 9000, PERMISSIVE), serialized, with N=0 as the baseline. Run with
 * {@code bin/bench AuthorizationTranslation -prof gc} (gc.alloc.rate.norm is bytes per build).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class AuthorizationTranslationBenchmark {
    @Param({"0", "100"})
    public int policies;

    /** RequestAuthentications in the namespace too (issue 19's benchmark: 100 policies and 10 of these). */
    @Param({"0", "10"})
    public int requestAuthentications;

    private MeshFixture mesh;
    private PushContext push;
    private final Proxy proxy = new Proxy("sidecar~10.0.0.9~httpbin-1.foo~foo.svc.cluster.local", Proxy.Type.SIDECAR,
            List.of("10.0.0.9"), "httpbin-1.foo", "foo.svc.cluster.local", "foo",
            Map.of("app", "httpbin", "version", "v1"), "Kubernetes", "1.24.0", "", "httpbin", "", Locality.NONE);

    /** Policy {@code i} of the namespace: four shapes in turn. */
    static String policy(int i) {
        String rules = switch (i % 4) {
            case 0 -> """
                      action: ALLOW
                      rules:
                      - from: [{source: {principals: ["cluster.local/ns/app-%1$d/sa/client"], namespaces: ["team-%1$d-*"]}}]
                        to: [{operation: {methods: [GET, POST], paths: ["/api/v%1$d/*", "/health"]}}]
                    """;
            case 1 -> """
                      action: DENY
                      rules:
                      - to: [{operation: {paths: ["/admin/%1$d/*"]}}]
                        when: [{key: "request.headers[x-tenant]", notValues: ["tenant-%1$d"]}]
                    """;
            case 2 -> """
                      action: ALLOW
                      rules:
                      - to: [{operation: {ports: ["9000"]}}]
                        from: [{source: {ipBlocks: ["10.%1$d.0.0/16"]}}]
                    """;
            default -> """
                      action: DENY
                      rules:
                      - from: [{source: {notNamespaces: [foo, "ns-%1$d"], remoteIpBlocks: ["192.0.2.%1$d"]}}]
                    """;
        };
        return """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: policy-%1$d, namespace: foo}
                spec:
                  selector: {matchLabels: {app: httpbin}}
                """.formatted(i) + rules.formatted(i % 250) + "---\n";
    }

    @Setup(Level.Trial)
    public void build() throws Exception {
        mesh = new MeshFixture();
        mesh.apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: httpbin, namespace: foo}
                spec:
                  hosts: [httpbin.foo.svc.cluster.local]
                  location: MESH_INTERNAL
                  resolution: STATIC
                  ports: [{number: 8000, name: http, protocol: HTTP}, {number: 9000, name: tcp, protocol: TCP}]
                  workloadSelector: {labels: {app: httpbin}}
                ---
                apiVersion: networking.istio.io/v1
                kind: WorkloadEntry
                metadata: {name: httpbin-1, namespace: foo}
                spec: {address: 10.0.0.9, labels: {app: httpbin, version: v1}}
                """);
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < policies; i++) {
            yaml.append(policy(i));
        }
        for (int i = 0; i < requestAuthentications; i++) {
            String keys = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
            yaml.append("apiVersion: security.istio.io/v1\nkind: RequestAuthentication\n")
                    .append("metadata: {name: jwt-").append(i).append(", namespace: foo}\n")
                    .append("spec:\n  selector: {matchLabels: {app: httpbin}}\n")
                    .append("  jwtRules:\n  - issuer: https://issuer-").append(i).append(".example.com\n")
                    .append("    jwks: '").append(keys).append("'\n---\n");
        }
        if (yaml.length() > 0) {
            mesh.apply(yaml.toString());
        }
        push = mesh.push();
        Listener l = SidecarInboundListenerBuilder.virtualInbound(proxy, push);
        System.out.printf("%n[authz] policies=%d requestAuthentications=%d virtualInbound %,d bytes, %d filter chains%n",
                policies, requestAuthentications, l.getSerializedSize(), l.getFilterChainsCount());
    }

    /** The RBAC filters of the sidecar's HTTP and TCP chains. */
    @Benchmark
    public int filters() {
        AuthorizationFilters f = AuthorizationFilters.forProxy(proxy, push);
        return f.http().size() + f.tcp().size();
    }

    /** The whole inbound listener with those filters in every chain, serialized as sent. */
    @Benchmark
    public int inboundListener() {
        return SidecarInboundListenerBuilder.virtualInbound(proxy, push).toByteArray().length;
    }

    @TearDown(Level.Trial)
    public void close() {
        mesh.close();
    }
}
