package io.meshpilot.security.jwt;

import static io.meshpilot.security.jwt.TestTokens.AUDIENCE;
import static io.meshpilot.security.jwt.TestTokens.ISSUER;
import static io.meshpilot.security.jwt.TestTokens.NOW;
import static io.meshpilot.security.jwt.TestTokens.at;
import static io.meshpilot.security.jwt.TestTokens.claims;
import static io.meshpilot.security.jwt.TestTokens.jwks;
import static io.meshpilot.security.jwt.TestTokens.sign;
import static org.jose4j.jws.AlgorithmIdentifiers.RSA_USING_SHA256;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.security.Authenticator;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.ClientCertAuthenticator;
import java.math.BigInteger;
import java.net.InetSocketAddress;
import java.security.KeyPairGenerator;
import java.security.cert.X509Certificate;
import java.time.Clock;
import java.time.ZoneOffset;
import java.util.Date;
import java.util.List;
import org.bouncycastle.asn1.x500.X500Name;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.cert.jcajce.JcaX509CertificateConverter;
import org.bouncycastle.cert.jcajce.JcaX509v3CertificateBuilder;
import org.bouncycastle.operator.jcajce.JcaContentSignerBuilder;
import org.jose4j.jwk.PublicJsonWebKey;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The token authenticator registered after the client-certificate one, as istiod orders them. */
class AuthenticatorsWithJwtTest {
    static final InetSocketAddress REMOTE = new InetSocketAddress("127.0.0.1", 40000);
    final PublicJsonWebKey key = TestTokens.rsa("rsa-1");
    final Authenticators authenticators = new Authenticators();
    JwtAuthenticator jwt;

    @BeforeEach
    void setUp() {
        jwt = new JwtAuthenticator(List.of(new JwtRule(ISSUER, List.of(AUDIENCE), "", jwks(key))),
                () -> "cluster.local", Clock.fixed(NOW, ZoneOffset.UTC));
        authenticators.register(jwt);
    }

    @AfterEach
    void tearDown() {
        jwt.close();
    }

    static CallHeaders bearer(String token) {
        return name -> name.equals("authorization") ? List.of("Bearer " + token) : List.of();
    }

    @Test
    void clientCertificateFirstThenToken() {
        assertEquals(List.of(ClientCertAuthenticator.TYPE, JwtAuthenticator.TYPE),
                authenticators.all().stream().map(Authenticator::type).toList());
    }

    @Test
    void aTokenAuthenticatesACallerWithoutCertificate() throws Exception {
        var caller = authenticators.authenticate(new CallPeer("grpc-secure", REMOTE, List.of(), true),
                bearer(sign(key, RSA_USING_SHA256, claims())));
        assertEquals(new Authenticator.Caller(JwtAuthenticator.TYPE, List.of("spiffe://cluster.local/ns/default/sa/sleep")),
                caller);
    }

    @Test
    void aVerifiedCertificateDecidesBeforeTheToken() throws Exception {
        X509Certificate cert = certificate("spiffe://cluster.local/ns/prod/sa/api");
        String expired = sign(key, RSA_USING_SHA256, claims(c -> c.setExpirationTime(at(NOW.minusSeconds(60)))));
        var caller = authenticators.authenticate(new CallPeer("grpc-secure", REMOTE, List.of(cert), true), bearer(expired));
        assertEquals(new Authenticator.Caller(ClientCertAuthenticator.TYPE, List.of("spiffe://cluster.local/ns/prod/sa/api")),
                caller);
    }

    @Test
    void failuresOfAllAreReportedTogether() {
        CallPeer plain = new CallPeer("grpc-secure", REMOTE, List.of(), true);
        var e = assertThrows(Authenticator.AuthenticationException.class,
                () -> authenticators.authenticate(plain, CallHeaders.NONE));
        assertEquals("authentication failure: ClientCertAuthenticator: no credentials; IDTokenAuthenticator: no credentials",
                e.getMessage());
        String expired = sign(key, RSA_USING_SHA256, claims(c -> c.setExpirationTime(at(NOW.minusSeconds(60)))));
        e = assertThrows(Authenticator.AuthenticationException.class,
                () -> authenticators.authenticate(plain, bearer(expired)));
        assertEquals("authentication failure: ClientCertAuthenticator: no credentials; IDTokenAuthenticator: token expired",
                e.getMessage());
    }

    static X509Certificate certificate(String uri) throws Exception {
        var gen = KeyPairGenerator.getInstance("EC");
        gen.initialize(256);
        var kp = gen.generateKeyPair();
        X500Name name = new X500Name("O=jwt-test");
        var builder = new JcaX509v3CertificateBuilder(name, BigInteger.TWO, Date.from(NOW.minusSeconds(60)),
                Date.from(NOW.plusSeconds(3600)), name, kp.getPublic());
        builder.addExtension(Extension.subjectAlternativeName, false,
                new GeneralNames(new GeneralName(GeneralName.uniformResourceIdentifier, uri)));
        return new JcaX509CertificateConverter().getCertificate(
                builder.build(new JcaContentSignerBuilder("SHA256withECDSA").build(kp.getPrivate())));
    }
}
