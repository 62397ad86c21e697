package io.meshpilot.load;

import io.grpc.CallOptions;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.cli.Main;
import io.meshpilot.security.CertificateService;
import io.meshpilot.security.istiod.IstiodCertificates;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PrivateKey;
import java.security.Signature;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x500.RDN;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.ExtensionsGenerator;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;
import org.jose4j.jwk.JsonWebKey;
import org.jose4j.jwk.JsonWebKeySet;
import org.jose4j.jwk.RsaJwkGenerator;
import org.jose4j.jws.AlgorithmIdentifiers;
import org.jose4j.jws.JsonWebSignature;
import org.jose4j.jwt.JwtClaims;

/**
 * CA benchmark over the real interface: a MeshPilot server in this JVM (its CA key RSA 2048,
 * then EC P-256), clients calling CreateCertificate over TLS on the secure port with a JWT
 * as the Istio agent does, 1 and 8 at a time. Prints certificates/s and p50/p99 latency next
 * to the raw signature operations/s of the same CA key in the same JVM: their ratio says how
 * much of the limit the service uses.
 * <pre>bin/ca-bench [--seconds 5]</pre>
 */
public final class CaLoad {
    static final String ID_NS = "default";
    static final String ID_SA = "bench";

    public static void main(String[] args) throws Exception {
        int seconds = 5;
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--seconds")) {
                seconds = Integer.parseInt(args[i + 1]);
            }
        }
        List<String> csrs = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            csrs.add(csr()); // RSA 2048, the Istio agent's default key
        }
        System.out.printf("%-10s %-8s %10s %10s %9s %9s %18s%n", "CA key", "clients", "certs/s", "ratio", "p50 ms",
                "p99 ms", "raw sign ops/s");
        for (String keyType : List.of("RSA", "EC")) {
            run(keyType, seconds, csrs);
        }
        System.exit(0);
    }

    static void run(String keyType, int seconds, List<String> csrs) throws Exception {
        Path dir = Files.createTempDirectory("meshpilot-ca-bench");
        Files.createDirectories(dir.resolve("config"));
        var jwk = RsaJwkGenerator.generateJwk(2048);
        jwk.setKeyId("bench");
        Path jwks = Files.writeString(dir.resolve("jwks.json"),
                new JsonWebKeySet(jwk).toJson(JsonWebKey.OutputControlLevel.PUBLIC_ONLY));
        String issuer = "https://bench.meshpilot.test";
        String rule = "{\"issuer\":\"" + issuer + "\",\"audiences\":[\"istio-ca\"],\"jwksUri\":\"" + jwks.toUri() + "\"}";
        String[] flags = {"discovery", "--httpAddr", "127.0.0.1:0", "--grpcAddr", "127.0.0.1:0",
            "--secureGRPCAddr", "127.0.0.1:0", "--monitoringAddr", "127.0.0.1:0", "--httpsAddr", "127.0.0.1:0",
            "--configDir", dir.resolve("config").toString(), "--meshConfig", dir.resolve("mesh").toString(),
            "--caStateDir", dir.resolve("ca").toString(), "--configStateDir", dir.resolve("state").toString(),
            "--caKeyType", keyType};
        Map<String, String> env = Map.of("JWT_RULE", rule);
        Logger.getLogger("io.meshpilot.security").setLevel(Level.SEVERE);
        try (MeshPilotServer server = MeshPilotServer.start(Main.parseDiscoveryArgs(Arrays.copyOfRange(flags, 1, flags.length), env::get))) {
            IstiodCertificates certs = server.server().components().certificates();
            X509Certificate root = certs.material().root();
            PrivateKey caKey = certs.material().signingKey();
            double raw = rawSignaturesPerSecond(caKey, seconds);
            JwtClaims claims = new JwtClaims();
            claims.setIssuer(issuer);
            claims.setAudience("istio-ca");
            claims.setSubject("system:serviceaccount:" + ID_NS + ":" + ID_SA);
            claims.setExpirationTimeMinutesInTheFuture(60);
            JsonWebSignature jws = new JsonWebSignature();
            jws.setPayload(claims.toJson());
            jws.setKey(jwk.getPrivateKey());
            jws.setKeyIdHeaderValue("bench");
            jws.setAlgorithmHeaderValue(AlgorithmIdentifiers.RSA_USING_SHA256);
            String token = jws.getCompactSerialization();
            int port = server.ports().get("grpc-secure");
            String label = keyType.equals("RSA") ? "RSA 2048" : "EC P-256";
            for (int clients : new int[] {1, 8}) {
                Result r = drive(port, root, token, csrs, clients, seconds);
                System.out.printf("%-10s %-8d %10.0f %10.2f %9.2f %9.2f %18.0f%n", label, clients, r.perSecond,
                        r.perSecond / raw, r.p50Millis, r.p99Millis, raw);
            }
        }
    }

    record Result(double perSecond, double p50Millis, double p99Millis) {
    }

    static Result drive(int port, X509Certificate root, String token, List<String> csrs, int clients, int seconds)
            throws Exception {
        List<ManagedChannel> channels = new ArrayList<>();
        for (int i = 0; i < clients; i++) {
            channels.add(NettyChannelBuilder.forAddress("localhost", port)
                    .sslContext(GrpcSslContexts.forClient().trustManager(root).build()).build());
        }
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        AtomicBoolean measuring = new AtomicBoolean();
        AtomicBoolean stop = new AtomicBoolean();
        List<long[]> latencies = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        int[] counts = new int[clients];
        for (int c = 0; c < clients; c++) {
            int me = c;
            long[] mine = new long[2_000_000];
            latencies.add(mine);
            var ch = ClientInterceptors.intercept(channels.get(c), MetadataUtils.newAttachHeadersInterceptor(md));
            Thread t = Thread.ofPlatform().name("ca-client-" + c).start(() -> {
                int i = 0;
                while (!stop.get()) {
                    String csr = csrs.get((me + i++) % csrs.size());
                    long t0 = System.nanoTime();
                    ClientCalls.blockingUnaryCall(ch, CertificateService.CREATE_CERTIFICATE,
                            CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS),
                            IstioCertificateRequest.newBuilder().setCsr(csr).setValidityDuration(3600).build());
                    if (measuring.get() && counts[me] < mine.length) {
                        mine[counts[me]++] = System.nanoTime() - t0;
                    }
                }
            });
            threads.add(t);
        }
        Thread.sleep(Math.max(2, seconds / 2) * 1000L); // warm-up
        measuring.set(true);
        long start = System.nanoTime();
        Thread.sleep(seconds * 1000L);
        measuring.set(false);
        long elapsed = System.nanoTime() - start;
        stop.set(true);
        for (Thread t : threads) {
            t.join();
        }
        channels.forEach(ManagedChannel::shutdownNow);
        int total = Arrays.stream(counts).sum();
        long[] all = new long[total];
        int k = 0;
        for (int c = 0; c < clients; c++) {
            System.arraycopy(latencies.get(c), 0, all, k, counts[c]);
            k += counts[c];
        }
        Arrays.sort(all);
        return new Result(total / (elapsed / 1e9), all[(int) (total * 0.50)] / 1e6, all[Math.min(total - 1, (int) (total * 0.99))] / 1e6);
    }

    static double rawSignaturesPerSecond(PrivateKey key, int seconds) throws Exception {
        Signature s = Signature.getInstance(key.getAlgorithm().equals("RSA") ? "SHA256withRSA" : "SHA256withECDSA");
        byte[] data = new byte[1024];
        new Random(1).nextBytes(data);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(Math.max(1, seconds / 2));
        while (System.nanoTime() < end) { // warm-up
            s.initSign(key);
            s.update(data);
            s.sign();
        }
        int n = 0;
        long start = System.nanoTime();
        end = start + TimeUnit.SECONDS.toNanos(seconds);
        while (System.nanoTime() < end) {
            s.initSign(key);
            s.update(data);
            s.sign();
            n++;
        }
        return n / ((System.nanoTime() - start) / 1e9);
    }

    /** A PKCS#10 request for a new RSA 2048 key naming the bench identity, as the Istio agent makes it. */
    static String csr() throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("RSA");
        g.initialize(2048);
        KeyPair kp = g.generateKeyPair();
        var ext = new ExtensionsGenerator();
        ext.addExtension(Extension.subjectAlternativeName, true, new GeneralNames(new GeneralName(
                GeneralName.uniformResourceIdentifier, "spiffe://cluster.local/ns/" + ID_NS + "/sa/" + ID_SA)));
        var req = new JcaPKCS10CertificationRequestBuilder(new X500Name(new RDN[0]), kp.getPublic())
                .addAttribute(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest, ext.generate())
                .build(new JcaContentSignerBuilder("SHA256withRSA").build(kp.getPrivate()));
        StringWriter w = new StringWriter();
        try (JcaPEMWriter pw = new JcaPEMWriter(w)) {
            pw.writeObject(req);
        }
        return w.toString();
    }
}
