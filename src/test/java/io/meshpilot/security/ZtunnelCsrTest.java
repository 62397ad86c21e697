package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Channel;
import io.grpc.ClientInterceptors;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.Status;
import io.grpc.stub.MetadataUtils;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.Await;
import io.meshpilot.testing.CapturedLog;
import io.meshpilot.testing.OpenSsl;
import io.meshpilot.testing.TestServers;
import io.meshpilot.testing.kube.FakeApiServer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Certificates for the pods ztunnel serves, end to end as ztunnel asks for them (istio/ztunnel
 * src/identity/caclient.rs and auth.rs: a CSR for the pod's SPIFFE identity with metadata
 * {@code ImpersonatedIdentity}, its own pod-bound token as bearer and its cluster in
 * {@code clusterid}) over TLS to the CA of a server whose API server is the stand-in, which
 * reviews the tokens. The checks are istiod's ClusterNodeAuthorizer
 * (security/pkg/server/ca/node_auth.go); every refusal is istiod's opaque
 * {@code Unauthenticated "request impersonation authentication failure"}, the reason logged.
 */
class ZtunnelCsrTest {
    static final String OPAQUE = "request impersonation authentication failure";
    static final String BOOKINFO = KubeTokenReviewTest.BOOKINFO;

    @TempDir
    Path dir;
    FakeApiServer api;

    @BeforeEach
    void startApiServer() {
        api = FakeApiServer.start();
        api.installIstioCrds();
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: istio-system}\n");
        api.apply("apiVersion: v1\nkind: Namespace\nmetadata: {name: default}\n");
    }

    @AfterEach
    void stopApiServer() {
        api.stop();
    }

    record Case(String name, String token, String identity, String signedFor, String logged) {
    }

    @Test
    void ztunnelGetsCertificatesOnlyForPodsOnItsNode() throws Exception {
        String ztunnelUid = KubeTokenReviewTest.pod(api, "istio-system", "ztunnel-n1", "ztunnel", "node-1", "");
        // a pod whose token claims the ztunnel account but that runs as another one
        String imposterUid = KubeTokenReviewTest.pod(api, "istio-system", "imposter-n1", "default", "node-1", "");
        String bookinfoUid = KubeTokenReviewTest.pod(api, "default", "bookinfo-n1", "bookinfo", "node-1", "");
        KubeTokenReviewTest.pod(api, "default", "ratings-n2", "ratings", "node-2", "");
        KubeTokenReviewTest.pod(api, "default", "reviews-n1", "reviews", "node-1", "status: {phase: Failed}\n");
        ztunnelToken("ztunnel", "ztunnel-n1", ztunnelUid);
        ztunnelToken("imposter", "imposter-n1", imposterUid);
        api.tokens().acceptForPod("bookinfo", KubeTokenReviewTest.sa("default", "bookinfo"),
                List.of(KubeTokenReviewTest.ISTIO_CA), "bookinfo-n1", bookinfoUid);

        String csr = new OpenSsl(Files.createDirectories(dir.resolve("openssl"))).ecCsr("w", "prime256v1", null);
        try (MeshPilotServer server = startTrustingZtunnel();
             CapturedLog log = new CapturedLog(CertificateService.class)) {
            ManagedChannel ch = KubeTokenReviewTest.channel(server);
            try {
                List<Case> table = List.of(
                        new Case("a pod on ztunnel's node", "ztunnel", BOOKINFO, BOOKINFO, null),
                        new Case("a pod on another node", "ztunnel", "spiffe://cluster.local/ns/default/sa/ratings",
                                null, "no instances of \"default/ratings\" found on node \"node-1\""),
                        new Case("a failed pod on ztunnel's node", "ztunnel",
                                "spiffe://cluster.local/ns/default/sa/reviews", null,
                                "no instances of \"default/reviews\" found on node \"node-1\""),
                        new Case("a caller not in CA_TRUSTED_NODE_ACCOUNTS", "bookinfo",
                                "spiffe://cluster.local/ns/default/sa/bookinfo", null,
                                "caller default/bookinfo is not allowed to impersonate"),
                        new Case("a caller whose pod runs as another service account", "imposter", BOOKINFO, null,
                                "pod found, but ServiceAccount does not match: default vs ztunnel"),
                        new Case("an identity that is not a SPIFFE one", "ztunnel", "bookinfo", null,
                                "failed to validate impersonated identity bookinfo"));
                List<String> wrong = new ArrayList<>();
                for (Case c : table) {
                    Object result = CaClient.create(asZtunnel(ch, c.token()), null,
                            KubeTokenReviewTest.impersonating(csr, c.identity()));
                    if (c.signedFor() != null) {
                        if (!(result instanceof List) || !KubeTokenReviewTest.uriSans(result).equals(List.of(c.signedFor()))) {
                            wrong.add(c.name() + ": expected a certificate for " + c.signedFor() + ", got " + result);
                        }
                    } else if (!(result instanceof Status s) || s.getCode() != Status.Code.UNAUTHENTICATED
                            || !OPAQUE.equals(s.getDescription())) {
                        wrong.add(c.name() + ": expected Unauthenticated \"" + OPAQUE + "\", got " + result);
                    } else if (!log.has("WARNING", "impersonation of " + c.identity() + " denied", c.logged())) {
                        wrong.add(c.name() + ": no log line with \"" + c.logged() + "\" in " + log.lines());
                    }
                }
                assertEquals(List.of(), wrong);
                assertTrue(log.lines().stream().noneMatch(l -> l.contains("Bearer")),
                        "no token in the log");
            } finally {
                ch.shutdownNow();
            }
        }
    }

    /**
     * Review finding 4: istiod answers the node check from a pod informer (node_auth.go
     * NewClusterNodeAuthorizer: {@code status.phase!=Failed}, indexed by service account and node),
     * so a burst of CSRs (a ztunnel DaemonSet restart: one per identity per node) costs the API server
     * nothing. Pods scheduled after start-up are seen through the watch, a pod deleted is no longer
     * found, and a token naming an older pod of the same name is refused on its uid.
     */
    @Test
    void csrsAreCheckedFromThePodInformerWithoutApiRequests() throws Exception {
        String ztunnelUid = KubeTokenReviewTest.pod(api, "istio-system", "ztunnel-n1", "ztunnel", "node-1", "");
        KubeTokenReviewTest.pod(api, "default", "bookinfo-n1", "bookinfo", "node-1", "");
        ztunnelToken("ztunnel", "ztunnel-n1", ztunnelUid);
        ztunnelToken("recreated", "ztunnel-n1", "uid-of-an-older-pod");
        String csr = new OpenSsl(Files.createDirectories(dir.resolve("openssl"))).ecCsr("w", "prime256v1", null);
        try (MeshPilotServer server = startTrustingZtunnel();
             CapturedLog log = new CapturedLog(CertificateService.class)) {
            ManagedChannel ch = KubeTokenReviewTest.channel(server);
            try {
                Channel ztunnel = asZtunnel(ch, "ztunnel");
                long podRequests = podRequests();
                for (int i = 0; i < 20; i++) {
                    Object result = CaClient.create(ztunnel, null, KubeTokenReviewTest.impersonating(csr, BOOKINFO));
                    assertEquals(List.of(BOOKINFO), KubeTokenReviewTest.uriSans(result), "CSR " + i);
                }
                assertEquals(podRequests, podRequests(), "pod requests to the API server during 20 CSRs: "
                        + api.requestLog().stream().filter(ZtunnelCsrTest::podRequest).toList());

                String ratings = "spiffe://cluster.local/ns/default/sa/ratings";
                KubeTokenReviewTest.pod(api, "default", "ratings-n1", "ratings", "node-1", "");
                Await.until("a pod scheduled after start-up is seen", Duration.ofSeconds(20), () -> CaClient.create(
                        ztunnel, null, KubeTokenReviewTest.impersonating(csr, ratings)) instanceof List<?> chain
                        && KubeTokenReviewTest.uriSans(chain).equals(List.of(ratings)));
                api.delete("v1", "Pod", "default", "ratings-n1");
                Await.until("a deleted pod is no longer found", Duration.ofSeconds(20), () -> CaClient.create(ztunnel,
                        null, KubeTokenReviewTest.impersonating(csr, ratings)) instanceof Status);
                assertTrue(log.has("WARNING", "no instances of \"default/ratings\" found on node \"node-1\""),
                        log.lines().toString());

                Object stale = CaClient.create(asZtunnel(ch, "recreated"), null,
                        KubeTokenReviewTest.impersonating(csr, BOOKINFO));
                assertTrue(stale instanceof Status s && s.getCode() == Status.Code.UNAUTHENTICATED, String.valueOf(stale));
                assertTrue(log.has("WARNING", "pod found, but UID does not match: " + ztunnelUid
                        + " vs uid-of-an-older-pod"), log.lines().toString());
                assertEquals(podRequests, podRequests(), "no pod requests for any of these CSRs");
            } finally {
                ch.shutdownNow();
            }
        }
    }

    /** A server on the stand-in (no Kubernetes registry) that trusts istio-system/ztunnel to impersonate. */
    private MeshPilotServer startTrustingZtunnel() throws Exception {
        List<String> flags = TestServers.flags(dir, "--kubeconfig", api.writeKubeconfig(dir).toString(),
                "--registries", "Mock");
        return MeshPilotServer.start(TestServers.args(flags, Map.of("CA_TRUSTED_NODE_ACCOUNTS", "istio-system/ztunnel")));
    }

    /** Tokens the stand-in accepts as bound to pod {@code pod} (uid {@code uid}) of istio-system/ztunnel. */
    private void ztunnelToken(String token, String pod, String uid) {
        api.tokens().acceptForPod(token, KubeTokenReviewTest.sa("istio-system", "ztunnel"),
                List.of(KubeTokenReviewTest.ISTIO_CA), pod, uid);
    }

    /** A read of pods that is not the informer's watch (a GET of one pod, or a list). */
    private static boolean podRequest(String line) {
        return line.startsWith("GET ") && line.contains("/pods") && !line.contains("watch=true");
    }

    private long podRequests() {
        return api.requestLog().stream().filter(ZtunnelCsrTest::podRequest).count();
    }

    /** The headers ztunnel's token auth source sends: its bearer token and its cluster. */
    private static Channel asZtunnel(Channel ch, String token) {
        Metadata md = new Metadata();
        md.put(Metadata.Key.of("authorization", Metadata.ASCII_STRING_MARSHALLER), "Bearer " + token);
        md.put(Metadata.Key.of("clusterid", Metadata.ASCII_STRING_MARSHALLER), "Kubernetes");
        return ClientInterceptors.intercept(ch, MetadataUtils.newAttachHeadersInterceptor(md));
    }
}
