package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.model.CredentialNames;
import io.meshpilot.networking.UpstreamTls;
import java.util.List;

/**
 * The TLS a gateway server terminates (istiod's BuildListenerTLSContext for gateways).
 * Certificates come over SDS: {@code credentialName} (or the {@code credentialNames}) by istiod's
 * resource names, {@code kubernetes://<name>} for a bare name, Gateway API names such as
 * {@code kubernetes-gateway://<ns>/<name>} as they are (the CA as the first name plus
 * {@code -cacert}, or {@code caCertCredentialName}) from istiod over ADS, {@code builtin://} as the
 * workload's own; certificate files as
 * {@code file-cert:<cert>~<key>} / {@code file-root:<ca>} from the local agent; ISTIO_MUTUAL as
 * the workload's {@code default} / {@code ROOTCA}. Client certificates are required for MUTUAL
 * and ISTIO_MUTUAL. TLS 1.2 is the minimum unless the server says otherwise.
 */
final class GatewayTls {
    private GatewayTls() {
    }

    /**
     * @param http whether HTTP runs inside (ALPN h2 and http/1.1 are offered then; a TCP server
     *             that terminates TLS offers none)
     */
    static DownstreamTlsContext context(ServerTLSSettings tls, boolean http) {
        CommonTlsContext.Builder common = CommonTlsContext.newBuilder();
        if (http) {
            common.addAllAlpnProtocols(InboundTls.ALPN_HTTP);
        }
        TlsParameters.Builder params = TlsParameters.newBuilder()
                .setTlsMinimumProtocolVersion(tls.getMinProtocolVersion() == ServerTLSSettings.TLSProtocol.TLS_AUTO
                        ? TlsParameters.TlsProtocol.TLSv1_2 : protocol(tls.getMinProtocolVersion()))
                .addAllCipherSuites(tls.getCipherSuitesList().stream().distinct().toList());
        if (tls.getMaxProtocolVersion() != ServerTLSSettings.TLSProtocol.TLS_AUTO) {
            params.setTlsMaximumProtocolVersion(protocol(tls.getMaxProtocolVersion()));
        }
        common.setTlsParams(params);

        boolean mutual = tls.getMode() == ServerTLSSettings.TLSmode.MUTUAL
                || tls.getMode() == ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL;
        CertificateValidationContext.Builder validation = CertificateValidationContext.newBuilder();
        tls.getSubjectAltNamesList().forEach(san ->
                validation.addMatchSubjectAltNames(StringMatcher.newBuilder().setExact(san)));
        validation.addAllVerifyCertificateSpki(tls.getVerifyCertificateSpkiList());
        validation.addAllVerifyCertificateHash(tls.getVerifyCertificateHashList());

        if (tls.getMode() == ServerTLSSettings.TLSmode.ISTIO_MUTUAL) {
            common.addTlsCertificateSdsSecretConfigs(UpstreamTls.sds(UpstreamTls.DEFAULT_SECRET))
                    .setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                            .setDefaultValidationContext(validation)
                            .setValidationContextSdsSecretConfig(UpstreamTls.sds(UpstreamTls.ROOT_SECRET)));
            mutual = true;
        } else if (!tls.getCredentialName().isEmpty() || tls.getCredentialNamesCount() > 0) {
            // istiod's ApplyCredentialSDSToServerCommonTLSContext: credentialNames (an RSA and an ECDSA
            // certificate) win over credentialName and share the first one's CA unless caCertCredentialName names one
            List<String> names = tls.getCredentialNamesCount() > 0 ? tls.getCredentialNamesList()
                    : List.of(tls.getCredentialName());
            names.forEach(n -> common.addTlsCertificateSdsSecretConfigs(UpstreamTls.credentialSds(n)));
            String ca = tls.getCaCertCredentialName().isEmpty() ? names.get(0) + CredentialNames.CA_SUFFIX
                    : tls.getCaCertCredentialName();
            if (mutual) {
                common.setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(UpstreamTls.credentialSds(ca)));
            }
        } else {
            common.addTlsCertificateSdsSecretConfigs(UpstreamTls.sds(
                    "file-cert:" + tls.getServerCertificate() + "~" + tls.getPrivateKey()));
            if (mutual && !tls.getCaCertificates().isEmpty()) {
                common.setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(UpstreamTls.sds("file-root:" + tls.getCaCertificates())));
            }
        }
        return DownstreamTlsContext.newBuilder().setCommonTlsContext(common)
                .setRequireClientCertificate(BoolValue.of(mutual
                        && tls.getMode() != ServerTLSSettings.TLSmode.OPTIONAL_MUTUAL))
                .build();
    }

    /** The two enums list the same versions in the same order (TLS_AUTO, 1.0 .. 1.3). */
    private static TlsParameters.TlsProtocol protocol(ServerTLSSettings.TLSProtocol p) {
        TlsParameters.TlsProtocol out = TlsParameters.TlsProtocol.forNumber(p.getNumber());
        return out == null ? TlsParameters.TlsProtocol.TLS_AUTO : out;
    }
}
