package io.meshpilot.security.jwt;

import static io.meshpilot.security.jwt.TestTokens.AUDIENCE;
import static io.meshpilot.security.jwt.TestTokens.ISSUER;
import static io.meshpilot.security.jwt.TestTokens.NOW;
import static io.meshpilot.security.jwt.TestTokens.claims;
import static io.meshpilot.security.jwt.TestTokens.jwks;
import static io.meshpilot.security.jwt.TestTokens.sign;
import static org.jose4j.jws.AlgorithmIdentifiers.RSA_USING_SHA256;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meshpilot.features.JwtPolicy;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.kube.KubeClientOptions;
import io.meshpilot.security.Authenticator;
import io.meshpilot.security.Authenticator.AuthenticationException;
import io.meshpilot.security.BearerToken;
import io.meshpilot.security.kube.KubeJwtAuthenticator;
import io.meshpilot.testing.kube.FakeApiServer;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Optional;
import org.jose4j.jwk.PublicJsonWebKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Both token authenticators read the authorization header as istiod's
 * {@code security.ExtractBearerToken} does: the token follows the exact prefix "Bearer ";
 * any other spelling of the scheme is no bearer token, so the caller is not recognized by
 * either. The JWT_RULE authenticator checks signatures locally, the Kubernetes one asks the
 * API server stand-in's TokenReview.
 */
class BearerSchemeTest {
    static final CallPeer PEER = new CallPeer("grpc-secure", new InetSocketAddress("127.0.0.1", 40000), List.of(), true);
    static final String SLEEP = "spiffe://cluster.local/ns/default/sa/sleep";

    @TempDir
    Path dir;
    FakeApiServer api;
    KubeClient kube;
    JwtAuthenticator jwt;
    KubeJwtAuthenticator kubeJwt;
    String jwtToken;

    @BeforeEach
    void setUp() throws Exception {
        PublicJsonWebKey key = TestTokens.rsa("rsa-1");
        jwt = new JwtAuthenticator(List.of(new JwtRule(ISSUER, List.of(AUDIENCE), "", jwks(key))),
                () -> "cluster.local", Clock.fixed(NOW, ZoneOffset.UTC));
        jwtToken = sign(key, RSA_USING_SHA256, claims());
        api = FakeApiServer.start();
        api.tokens().accept("reviewed-token", "system:serviceaccount:default:sleep", List.of("istio-ca"));
        kube = KubeClient.create(new KubeClientOptions(api.writeKubeconfig(dir), 1000, 1000));
        kubeJwt = new KubeJwtAuthenticator(kube.apiClient(), JwtPolicy.THIRD_PARTY, "Kubernetes",
                () -> "cluster.local", Duration.ZERO);
    }

    @AfterEach
    void tearDown() throws Exception {
        jwt.close();
        kube.close();
        api.stop();
    }

    static Optional<Authenticator.Caller> authenticate(Authenticator a, String authorization)
            throws AuthenticationException {
        return a.authenticate(PEER, name -> name.equals("authorization") ? List.of(authorization) : List.of());
    }

    @Test
    void theExactSchemeBearerIsReadByBothAuthenticators() throws Exception {
        assertEquals(List.of(SLEEP), authenticate(jwt, "Bearer " + jwtToken).orElseThrow().identities());
        assertEquals(List.of(SLEEP), authenticate(kubeJwt, "Bearer reviewed-token").orElseThrow().identities());
    }

    @Test
    void anyOtherSpellingOfTheSchemeIsNoBearerTokenForEither() throws Exception {
        for (String scheme : List.of("bearer ", "BEARER ", "bEaReR ", "Bearer\t", "Bearer")) {
            assertEquals(Optional.empty(), authenticate(jwt, scheme + jwtToken), "JWT_RULE, scheme '" + scheme + "'");
            assertEquals(Optional.empty(), authenticate(kubeJwt, scheme + "reviewed-token"),
                    "TokenReview, scheme '" + scheme + "'");
        }
    }

    @Test
    void anEmptyTokenIsRefusedInTheSameWordsByBoth() {
        var fromJwt = assertThrows(AuthenticationException.class, () -> authenticate(jwt, "Bearer "));
        var fromKube = assertThrows(AuthenticationException.class, () -> authenticate(kubeJwt, "Bearer "));
        assertEquals("empty bearer token", fromJwt.getMessage());
        assertEquals(fromJwt.getMessage(), fromKube.getMessage());
    }

    /** istiod cuts the prefix and keeps the rest as it is (strings.CutPrefix): spaces are part of the token. */
    @Test
    void theTokenIsTheRestOfTheHeaderVerbatim() {
        assertThrows(AuthenticationException.class, () -> authenticate(jwt, "Bearer  " + jwtToken));
        assertThrows(AuthenticationException.class, () -> authenticate(jwt, "Bearer " + jwtToken + " "));
        assertThrows(AuthenticationException.class, () -> authenticate(kubeJwt, "Bearer  reviewed-token"));
    }

    /** The "Istio" scheme is read on istiod's HTTP debug endpoints only, never on a gRPC call. */
    @Test
    void theIstioSchemeIsNoBearerTokenOnAGrpcCall() throws Exception {
        assertEquals(Optional.empty(), authenticate(jwt, "Istio " + jwtToken));
        assertEquals(Optional.empty(), authenticate(kubeJwt, "Istio reviewed-token"));
    }

    @Test
    void anOversizedTokenIsRefusedBeforeAnyReviewByBoth() {
        String huge = "Bearer " + "a".repeat(BearerToken.MAX_CHARS + 1);
        long reviewsBefore = api.requestLog().stream().filter(l -> l.contains("tokenreviews")).count();
        assertEquals("token too large",
                assertThrows(AuthenticationException.class, () -> authenticate(jwt, huge)).getMessage());
        assertEquals("token too large",
                assertThrows(AuthenticationException.class, () -> authenticate(kubeJwt, huge)).getMessage());
        assertEquals(reviewsBefore, api.requestLog().stream().filter(l -> l.contains("tokenreviews")).count());
    }
}
