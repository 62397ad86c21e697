package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.networking.UpstreamTls;

/**
 * The Istio mutual TLS of HBONE tunnels (istiod's listener_waypoint.go buildCommonConnectTLSContext):
 * the workload certificate {@code default} and the root {@code ROOTCA} from the agent over SDS,
 * the mesh's trust domains ({@link TrustDomains}) as URI SAN prefixes, ALPN {@code h2} (CONNECT runs over
 * HTTP/2) and TLS 1.3 only.
 */
final class HboneTls {
    private HboneTls() {
    }

    /** The common context; {@code peerSanPrefix} (may be empty) is one more URI SAN prefix the peer must match. */
    static CommonTlsContext common(MeshConfig mesh, String peerSanPrefix) {
        CertificateValidationContext.Builder validation = CertificateValidationContext.newBuilder();
        for (String prefix : TrustDomains.uriPrefixes(mesh)) {
            validation.addMatchTypedSubjectAltNames(uriPrefix(prefix));
        }
        if (!peerSanPrefix.isEmpty()) {
            validation.addMatchTypedSubjectAltNames(uriPrefix(peerSanPrefix));
        }
        return CommonTlsContext.newBuilder()
                .addTlsCertificateSdsSecretConfigs(UpstreamTls.sds(UpstreamTls.DEFAULT_SECRET))
                .setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(UpstreamTls.sds(UpstreamTls.ROOT_SECRET)))
                .addAlpnProtocols("h2")
                .setTlsParams(TlsParameters.newBuilder()
                        .setTlsMinimumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_3)
                        .setTlsMaximumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_3))
                .build();
    }

    /** HBONE termination ({@code connect_terminate}): the client's certificate is required. */
    static DownstreamTlsContext downstream(MeshConfig mesh) {
        return DownstreamTlsContext.newBuilder().setCommonTlsContext(common(mesh, ""))
                .setRequireClientCertificate(BoolValue.of(true)).build();
    }

    /** HBONE origination ({@code connect_originate}) to peers whose identity starts with {@code peerSanPrefix}. */
    static UpstreamTlsContext upstream(MeshConfig mesh, String peerSanPrefix) {
        return UpstreamTlsContext.newBuilder().setCommonTlsContext(common(mesh, peerSanPrefix)).build();
    }

    private static SubjectAltNameMatcher uriPrefix(String prefix) {
        return SubjectAltNameMatcher.newBuilder().setSanType(SubjectAltNameMatcher.SanType.URI)
                .setMatcher(StringMatcher.newBuilder().setPrefix(prefix)).build();
    }
}
