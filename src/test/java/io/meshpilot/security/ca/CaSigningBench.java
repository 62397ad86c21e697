package io.meshpilot.security.ca;

import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.Signature;
import java.security.spec.ECGenParameterSpec;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.ExtensionsGenerator;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

/**
 * How fast the CA signs, in process (no gRPC): raw signature operations of the CA key, then
 * {@link CertificateAuthority#sign} end to end (CSR parse + checks + leaf build + signature +
 * PEM) at 1 and 8 threads, with latency percentiles. Not a test; run with
 * {@code java -cp target/classes:target/test-classes:<deps> io.meshpilot.security.ca.CaSigningBench [seconds]}.
 */
public final class CaSigningBench {
    static final String ID = "spiffe://cluster.local/ns/default/sa/bookinfo";
    /** Keeps the JIT from dropping signatures nobody reads. */
    static volatile long sink;

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 4;
        Duration warmup = Duration.ofMillis((long) (seconds * 500));
        Duration measure = Duration.ofMillis((long) (seconds * 1000));
        System.out.printf("CA signing benchmark: %s, %d CPUs, warm-up %s, measure %s per row%n%n",
                Runtime.version(), Runtime.getRuntime().availableProcessors(), warmup, measure);

        Path tmp = Files.createTempDirectory("ca-bench");
        CaMaterial rsa = SelfSignedCaStore.loadOrCreate(tmp.resolve("rsa"), SelfSignedOptions.defaults(), Clock.systemUTC());
        CaMaterial ec = SelfSignedCaStore.loadOrCreate(tmp.resolve("ec"),
                SelfSignedOptions.defaults().withKeyType(SelfSignedOptions.KeyType.EC_P256), Clock.systemUTC());

        System.out.println("raw signature, 1 KiB input, 1 thread");
        System.out.printf("%-10s %-16s %12s%n", "CA key", "algorithm", "ops/s");
        for (CaMaterial m : List.of(rsa, ec)) {
            String alg = KeyPolicy.signatureAlgorithm(m.signingCertificate().getPublicKey());
            double ops = rawSignatures(m, alg, warmup, measure);
            System.out.printf("%-10s %-16s %,12.0f%n", keyName(m), alg, ops);
        }

        List<String> rsaCsrs = csrs("RSA", 8);
        List<String> ecCsrs = csrs("EC", 8);
        System.out.println();
        System.out.println("CertificateAuthority.sign(), CSR parse + checks + leaf + PEM chain");
        System.out.printf("%-8s %-8s %8s %14s %10s %10s %10s%n", "CA key", "CSR key", "threads", "certs/s", "p50 ms", "p99 ms", "max ms");
        for (CaMaterial m : List.of(rsa, ec)) {
            for (List<String> csrs : List.of(rsaCsrs, ecCsrs)) {
                for (int threads : new int[] {1, 8}) {
                    Row r = signing(new CertificateAuthority(m), csrs, threads, warmup, measure);
                    System.out.printf("%-8s %-8s %8d %,14.0f %10.3f %10.3f %10.3f%n", keyName(m),
                            csrs == rsaCsrs ? "RSA2048" : "EC-P256", threads, r.perSecond, r.p50Ms, r.p99Ms, r.maxMs);
                }
            }
        }
    }

    static String keyName(CaMaterial m) {
        return m.signingCertificate().getPublicKey().getAlgorithm().equals("RSA") ? "RSA2048" : "EC-P256";
    }

    static double rawSignatures(CaMaterial m, String alg, Duration warmup, Duration measure) throws Exception {
        byte[] tbs = new byte[1024];
        new Random(1).nextBytes(tbs);
        Signature s = Signature.getInstance(alg);
        for (int pass = 0; pass < 2; pass++) {
            long end = System.nanoTime() + (pass == 0 ? warmup : measure).toNanos();
            long start = System.nanoTime();
            long n = 0;
            while (System.nanoTime() < end) {
                s.initSign(m.signingKey());
                s.update(tbs);
                sink += s.sign()[0];
                n++;
            }
            if (pass == 1) {
                return n / ((System.nanoTime() - start) / 1e9);
            }
        }
        throw new IllegalStateException();
    }

    record Row(double perSecond, double p50Ms, double p99Ms, double maxMs) {
    }

    static Row signing(CertificateAuthority ca, List<String> csrs, int threads, Duration warmup, Duration measure)
            throws Exception {
        run(ca, csrs, threads, warmup); // warm-up, results dropped
        long start = System.nanoTime();
        long[] latencies = run(ca, csrs, threads, measure);
        double elapsed = (System.nanoTime() - start) / 1e9;
        Arrays.sort(latencies);
        return new Row(latencies.length / elapsed, pct(latencies, 0.50), pct(latencies, 0.99),
                latencies[latencies.length - 1] / 1e6);
    }

    static double pct(long[] sorted, double p) {
        return sorted[Math.min(sorted.length - 1, (int) Math.ceil(p * sorted.length) - 1)] / 1e6;
    }

    static long[] run(CertificateAuthority ca, List<String> csrs, int threads, Duration d) throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<long[]>> futures = new ArrayList<>();
            for (int t = 0; t < threads; t++) {
                int offset = t;
                futures.add(pool.submit(() -> {
                    long[] lat = new long[1 << 16];
                    int n = 0;
                    go.await();
                    long end = System.nanoTime() + d.toNanos();
                    while (System.nanoTime() < end) {
                        String csr = csrs.get((offset + n) % csrs.size());
                        long t0 = System.nanoTime();
                        ca.sign(csr, List.of(ID), Duration.ofHours(24));
                        if (n == lat.length) {
                            lat = Arrays.copyOf(lat, n * 2);
                        }
                        lat[n++] = System.nanoTime() - t0;
                    }
                    return Arrays.copyOf(lat, n);
                }));
            }
            go.countDown();
            List<long[]> all = new ArrayList<>();
            for (Future<long[]> f : futures) {
                all.add(f.get());
            }
            return all.stream().flatMapToLong(Arrays::stream).toArray();
        } finally {
            pool.shutdownNow();
        }
    }

    /** CSRs as istio-agent sends them: a fresh key, the SPIFFE URI SAN requested. */
    static List<String> csrs(String type, int count) throws Exception {
        List<String> out = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            KeyPairGenerator gen = KeyPairGenerator.getInstance(type);
            if (type.equals("EC")) {
                gen.initialize(new ECGenParameterSpec("secp256r1"));
            } else {
                gen.initialize(2048);
            }
            KeyPair kp = gen.generateKeyPair();
            ExtensionsGenerator ext = new ExtensionsGenerator();
            ext.addExtension(Extension.subjectAlternativeName, true,
                    new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, ID)));
            var csr = new JcaPKCS10CertificationRequestBuilder(new X500Name("O=cluster.local"), kp.getPublic())
                    .addAttribute(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest, ext.generate())
                    .build(new JcaContentSignerBuilder(type.equals("EC") ? "SHA256withECDSA" : "SHA256withRSA")
                            .build(kp.getPrivate()));
            StringWriter sw = new StringWriter();
            try (JcaPEMWriter w = new JcaPEMWriter(sw)) {
                w.writeObject(csr);
            }
            out.add(sw.toString());
        }
        return out;
    }
}
