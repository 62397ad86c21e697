package io.meshpilot.networking.envoy;

import com.google.protobuf.BoolValue;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.DownstreamTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.networking.UpstreamTls;

/**
 * The TLS a gateway server terminates (istiod's BuildListenerTLSContext for gateways).
 * Certificates come over SDS: {@code credentialName} as {@code kubernetes://<name>} (and its CA as
 * {@code kubernetes://<name>-cacert}) from istiod over ADS; certificate files as
 * {@code file-cert:<cert>~<key>} / {@code file-root:<ca>} from the local agent; ISTIO_MUTUAL as
 * the workload's {@code default} / {@code ROOTCA}. Client certificates are required for MUTUAL
 * and ISTIO_MUTUAL. TLS 1.2 is the minimum unless the server says otherwise.
 */
final class GatewayTls {
    static final String CREDENTIAL_PREFIX = "kubernetes://";
    static final String CACERT_SUFFIX = "-cacert";

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
        } else if (!tls.getCredentialName().isEmpty()) {
            common.addTlsCertificateSdsSecretConfigs(ads(CREDENTIAL_PREFIX + tls.getCredentialName()));
            if (mutual) {
                common.setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(
                                ads(CREDENTIAL_PREFIX + tls.getCredentialName() + CACERT_SUFFIX)));
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

    /** A gateway credential served by istiod itself over the ADS stream. */
    static SdsSecretConfig ads(String name) {
        return SdsSecretConfig.newBuilder().setName(name).setSdsConfig(ConfigSource.newBuilder()
                .setAds(AggregatedConfigSource.getDefaultInstance())
                .setResourceApiVersion(ApiVersion.V3)).build();
    }

    /** The two enums list the same versions in the same order (TLS_AUTO, 1.0 .. 1.3). */
    private static TlsParameters.TlsProtocol protocol(ServerTLSSettings.TLSProtocol p) {
        TlsParameters.TlsProtocol out = TlsParameters.TlsProtocol.forNumber(p.getNumber());
        return out == null ? TlsParameters.TlsProtocol.TLS_AUTO : out;
    }
}
