package io.meshpilot.testing;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.GrpcSslContexts;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.security.istiod.IstiodCertificates;
import java.io.ByteArrayInputStream;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
import java.time.Duration;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.openssl.jcajce.JcaPEMWriter;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.bouncycastle.pkcs.jcajce.JcaPKCS10CertificationRequestBuilder;

/** Channels to a server's secure xDS port (15012) as a workload's Istio agent opens them. */
public final class WorkloadChannels {
    private WorkloadChannels() {
    }

    /**
     * Real TLS to the secure port presenting a workload certificate for {@code identity}
     * ({@code spiffe://<td>/ns/<ns>/sa/<sa>}), issued by the server's own CA from a CSR as the
     * agent gets it, and trusting the server's root.
     */
    public static ManagedChannel secureXds(MeshPilotServer server, String identity) throws Exception {
        KeyPairGenerator g = KeyPairGenerator.getInstance("EC");
        g.initialize(256);
        KeyPair kp = g.generateKeyPair();
        var csr = new JcaPKCS10CertificationRequestBuilder(new X500Name("O=cluster.local"), kp.getPublic())
                .build(new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate()));
        StringWriter pem = new StringWriter();
        try (JcaPEMWriter w = new JcaPEMWriter(pem)) {
            w.writeObject(csr);
        }
        IstiodCertificates certs = server.server().components().certificates();
        List<String> chain = certs.ca().sign(pem.toString(), List.of(identity), Duration.ofHours(1)).certChain();
        CertificateFactory cf = CertificateFactory.getInstance("X.509");
        X509Certificate[] presented = new X509Certificate[chain.size() - 1]; // leaf and intermediates, not the root
        for (int i = 0; i < presented.length; i++) {
            presented[i] = (X509Certificate) cf.generateCertificate(
                    new ByteArrayInputStream(chain.get(i).getBytes(StandardCharsets.US_ASCII)));
        }
        var ssl = GrpcSslContexts.forClient().trustManager(certs.material().root()).keyManager(kp.getPrivate(), presented);
        // the agent dials istiod's Service, the name every serving certificate has (in a cluster, the only one)
        return NettyChannelBuilder.forAddress("localhost", server.ports().get("grpc-secure"))
                .overrideAuthority("istiod.istio-system.svc").sslContext(ssl.build()).build();
    }
}
