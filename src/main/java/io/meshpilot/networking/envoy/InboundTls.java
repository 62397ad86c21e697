package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.networking.UpstreamTls;
import java.util.List;

/**
 * The server side of Istio mutual TLS on inbound filter chains (istiod's BuildInboundTLS):
 * the workload certificate and the mesh root come from the local agent over SDS (secrets
 * {@code default} and {@code ROOTCA} on the bootstrap cluster {@code sds-grpc}), a client
 * certificate is required, TLS 1.2 to 1.3 with istiod's cipher list. TCP chains advertise
 * {@code istio-peer-exchange} first (metadata exchange), HTTP chains {@code h2, http/1.1}.
 */
final class InboundTls {
    static final String SDS_CLUSTER = UpstreamTls.SDS_CLUSTER;
    static final String SDS_DEFAULT = UpstreamTls.DEFAULT_SECRET;
    static final String SDS_ROOT = UpstreamTls.ROOT_SECRET;
    static final List<String> ALPN_HTTP = List.of("h2", "http/1.1");
    static final List<String> ALPN_TCP = List.of("istio-peer-exchange", "h2", "http/1.1");
    static final List<String> CIPHERS = List.of("ECDHE-ECDSA-AES256-GCM-SHA384", "ECDHE-RSA-AES256-GCM-SHA384",
            "ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-RSA-AES128-GCM-SHA256", "AES256-GCM-SHA384", "AES128-GCM-SHA256");

    private InboundTls() {
    }

    /** An SDS reference to {@code name} served by the agent. */
    static SdsSecretConfig sds(String name) {
        return UpstreamTls.sds(name);
    }

    static DownstreamTlsContext context(boolean http, MeshConfig mesh) {
        var validation = CertificateValidationContext.newBuilder();
        // istiod's BuildInboundTLS with authn.TrustDomainsForValidation
        for (String prefix : TrustDomains.uriPrefixes(mesh)) {
            validation.addMatchSubjectAltNames(StringMatcher.newBuilder().setPrefix(prefix));
        }
        CommonTlsContext common = CommonTlsContext.newBuilder()
                .addAllAlpnProtocols(http ? ALPN_HTTP : ALPN_TCP)
                .setTlsParams(TlsParameters.newBuilder().addAllCipherSuites(CIPHERS)
                        .setTlsMinimumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_2)
                        .setTlsMaximumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_3))
                .addTlsCertificateSdsSecretConfigs(sds(SDS_DEFAULT))
                .setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(sds(SDS_ROOT)))
                .build();
        return DownstreamTlsContext.newBuilder().setCommonTlsContext(common)
                .setRequireClientCertificate(BoolValue.of(true)).build();
    }
}
