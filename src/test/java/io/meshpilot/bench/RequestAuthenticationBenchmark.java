package io.meshpilot.bench;

import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.GeneratedMesh;
import io.meshpilot.xds.SidecarXds;
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
 * One sidecar's listeners (LDS, built and serialized) in a generated mesh of 100 services,
 * with {@code policies} RequestAuthentications in the sidecar's namespace: each its own issuer
 * and inline RSA key set, half namespace-wide, half selecting the sidecar's app, so every one
 * applies and the jwt_authn filter has {@code policies} providers on every inbound HTTP chain.
 * {@code 0} is the baseline. Also measures building the PushContext (which collects the
 * policies and asks the resolver for remote key sets: none here). Run with
 * {@code bin/bench RequestAuthentication -prof gc} (gc.alloc.rate.norm: bytes per operation).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED", "-Xmx2g"})
public class RequestAuthenticationBenchmark {
    @Param({"0", "10"})
    public int policies;

    private GeneratedMesh mesh;
    private PushContext push;
    private Proxy proxy;

    @Setup(Level.Trial)
    public void build() throws Exception {
        mesh = GeneratedMesh.of(100);
        String ns = GeneratedMesh.namespace(0);
        StringBuilder yaml = new StringBuilder();
        for (int i = 0; i < policies; i++) {
            String keys = new JsonWebKeySet(RsaJwkGenerator.generateJwk(2048)).toJson();
            yaml.append("apiVersion: security.istio.io/v1\nkind: RequestAuthentication\n")
                    .append("metadata: {name: jwt-").append(i).append(", namespace: ").append(ns).append("}\n")
                    .append("spec:\n")
                    .append(i % 2 == 0 ? "" : "  selector: {matchLabels: {app: svc-0}}\n")
                    .append("  jwtRules:\n  - issuer: https://issuer-").append(i).append(".example.com\n")
                    .append("    jwks: '").append(keys).append("'\n")
                    .append("    fromHeaders: [{name: x-jwt-").append(i).append(", prefix: 'Bearer '}]\n")
                    .append("    outputClaimToHeaders: [{header: x-sub-").append(i).append(", claim: sub}]\n---\n");
        }
        if (policies > 0) {
            mesh.fixture().apply(yaml.toString());
        }
        push = mesh.fixture().push(); // built after the policies are in the store
        proxy = GeneratedMesh.sidecar(0, 1);
        System.out.printf("%n[requestauthentication] policies=%d LDS %,d bytes%n", policies,
                SidecarXds.lds(proxy, push).getSerializedSize());
    }

    @Benchmark
    public int lds() {
        return SidecarXds.lds(proxy, push).toByteArray().length;
    }

    @Benchmark
    public PushContext pushContext() {
        return mesh.fixture().push();
    }

    @TearDown(Level.Trial)
    public void close() {
        mesh.close();
    }
}
