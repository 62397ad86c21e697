package io.meshpilot.networking.envoy;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The trust domains a peer's SPIFFE identity is validated against, as istiod's
 * authn.TrustDomainsForValidation (pilot/pkg/networking/plugin/authn/util_test.go's table), and
 * where they reach Envoy: sidecar inbound mTLS and both ends of HBONE.
 */
class TrustDomainsTest {
    static MeshConfig mesh(String td, List<String> aliases, List<String> caTrustDomains) {
        MeshConfig.Builder m = MeshConfig.newBuilder().setTrustDomain(td).addAllTrustDomainAliases(aliases);
        if (!caTrustDomains.isEmpty()) {
            m.addCaCertificates(MeshConfig.CertificateData.newBuilder().setPem("x").addAllTrustDomains(caTrustDomains));
        }
        return m.build();
    }

    @Test
    void theTrustDomainFirstThenAliasesThenTheCaCertificatesOnesWithoutRepeats() {
        assertEquals(List.of("cluster.local", "alias-1.domain", "some-other-alias-1.domain", "alias-2.domain"),
                TrustDomains.forValidation(mesh("cluster.local",
                        List.of("alias-1.domain", "some-other-alias-1.domain", "alias-2.domain"), List.of())));
        assertEquals(List.of("cluster.local", "alias-1.domain", "some-other-alias-1.domain", "alias-2.domain"),
                TrustDomains.forValidation(mesh("cluster.local", List.of("alias-1.domain", "alias-1.domain",
                        "some-other-alias-1.domain", "some-other-alias-1.domain", "alias-2.domain", "alias-2.domain"),
                        List.of())), "sequential duplicates");
        assertEquals(List.of("cluster.local", "alias-1.domain", "alias-2.domain", "some-other-alias-1.domain"),
                TrustDomains.forValidation(mesh("cluster.local", List.of("alias-1.domain", "alias-2.domain",
                        "alias-1.domain", "some-other-alias-1.domain", "alias-2.domain"), List.of())), "mixed duplicates");
        assertEquals(List.of("cluster.local", "alias-1.domain", "some-other-alias-1.domain", "alias-2.domain",
                        "foo", "bar"),
                TrustDomains.forValidation(mesh("cluster.local", List.of("alias-1.domain",
                        "some-other-alias-1.domain", "alias-2.domain"), List.of("foo", "bar", "cluster.local"))),
                "caCertificates' trust domains");
    }

    @Test
    void sidecarInboundAndHboneValidateTheTrustDomainAndItsAliases() {
        MeshConfig m = mesh("cluster.local", List.of("old.td"), List.of());
        List<String> expected = List.of("spiffe://cluster.local/", "spiffe://old.td/");
        CertificateValidationContext inbound = InboundTls.context(true, m).getCommonTlsContext()
                .getCombinedValidationContext().getDefaultValidationContext();
        assertEquals(expected, inbound.getMatchSubjectAltNamesList().stream().map(StringMatcher::getPrefix).toList());
        CertificateValidationContext terminate = HboneTls.downstream(m).getCommonTlsContext()
                .getCombinedValidationContext().getDefaultValidationContext();
        assertEquals(expected, terminate.getMatchTypedSubjectAltNamesList().stream()
                .map(s -> s.getMatcher().getPrefix()).toList());
        CertificateValidationContext originate = HboneTls.upstream(m, "spiffe://cluster.local/ns/shop/sa/")
                .getCommonTlsContext().getCombinedValidationContext().getDefaultValidationContext();
        assertEquals(List.of("spiffe://cluster.local/", "spiffe://old.td/", "spiffe://cluster.local/ns/shop/sa/"),
                originate.getMatchTypedSubjectAltNamesList().stream().map(s -> s.getMatcher().getPrefix()).toList(),
                "a waypoint's tunnel also names its own namespace");
    }
}
