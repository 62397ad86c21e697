package io.meshpilot.networking;

import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.DataSource;
import io.envoyproxy.envoy.config.core.v3.GrpcService;
import io.envoyproxy.envoy.config.core.v3.Http1ProtocolOptions;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.config.core.v3.UpstreamHttpProtocolOptions;
import io.envoyproxy.envoy.extensions.transport_sockets.raw_buffer.v3.RawBuffer;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CertificateValidationContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.CommonTlsContext;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SdsSecretConfig;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.SubjectAltNameMatcher;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsCertificate;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.TlsParameters;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.envoyproxy.envoy.type.matcher.v3.StringMatcher;
import io.meshpilot.api.networking.v1alpha3.ClientTLSSettings;
import io.meshpilot.model.CredentialNames;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * Upstream TLS of outbound clusters, as istiod sets it from a DestinationRule's {@code tls}:
 * ISTIO_MUTUAL presents the workload certificate and checks the peer against the mesh roots,
 * both fetched by SDS from the Istio agent ({@code default} and {@code ROOTCA} over the
 * agent's {@code sds-grpc} cluster); SIMPLE and MUTUAL use the files or the
 * {@code credentialName} secret the rule names. Without a rule's TLS, auto mTLS: endpoints
 * labelled {@code tlsMode: istio} get Istio mutual TLS, the others plaintext.
 */
public final class UpstreamTls {
    /** The transport socket's name in Envoy. */
    public static final String TLS_SOCKET = "envoy.transport_sockets.tls";
    /** The Istio agent's SDS cluster in the sidecar's bootstrap. */
    public static final String SDS_CLUSTER = "sds-grpc";
    /** SDS name of the workload certificate. */
    public static final String DEFAULT_SECRET = "default";
    /** SDS name of the mesh roots. */
    public static final String ROOT_SECRET = "ROOTCA";
    /** ALPN istiod offers on Istio mutual TLS (metadata exchange, then Istio). */
    static final List<String> ISTIO_ALPN = List.of("istio-peer-exchange", "istio");

    private UpstreamTls() {
    }

    /**
     * Sets the cluster's transport socket for {@code tls} (the rule's, for this port and
     * subset), or auto mTLS when the rule sets none.
     *
     * @param sni             istiod's SNI for the cluster: {@code outbound_.<port>_.<subset>_.<host>}
     * @param serviceAccounts the identities of the service's endpoints (SPIFFE URIs)
     * @param gateway         whether a gateway asks: only a gateway's SIMPLE or MUTUAL cluster takes
     *                        the rule's {@code credentialName} (a sidecar's is left without TLS, as istiod)
     */
    static void apply(Cluster.Builder c, ClientTLSSettings tls, boolean ruleSetsTls, String sni,
                      Collection<String> serviceAccounts, boolean gateway) {
        if (!ruleSetsTls) {
            autoMtls(c, sni, serviceAccounts);
            return;
        }
        if (!gateway && privilegedCredential(tls)) {
            return;
        }
        switch (tls.getMode()) {
            case ISTIO_MUTUAL -> c.setTransportSocket(socket(istioMutual(sni, serviceAccounts)));
            case SIMPLE, MUTUAL -> {
                c.setTransportSocket(socket(external(tls)));
                autoSniAndSan(c, tls);
            }
            default -> {
                // DISABLE: plaintext, no socket and no auto mTLS
            }
        }
    }

    /**
     * istiod's privilegedCredentialLookup: SIMPLE or MUTUAL with a {@code credentialName} that
     * is a Secret (a {@code configmap://} CA is anyone's to read).
     */
    private static boolean privilegedCredential(ClientTLSSettings tls) {
        return !tls.getCredentialName().isEmpty() && !tls.getCredentialName().startsWith("configmap://")
                && (tls.getMode() == ClientTLSSettings.TLSmode.SIMPLE || tls.getMode() == ClientTLSSettings.TLSmode.MUTUAL);
    }

    /** Auto mTLS: the endpoint's tlsMode label (EDS metadata) picks Istio mutual TLS or plaintext. */
    public static void autoMtls(Cluster.Builder c, String sni, Collection<String> serviceAccounts) {
        c.addTransportSocketMatches(Cluster.TransportSocketMatch.newBuilder().setName("tlsMode-istio")
                .setMatch(Struct.newBuilder().putFields("tlsMode", Value.newBuilder().setStringValue("istio").build()))
                .setTransportSocket(socket(istioMutual(sni, serviceAccounts))));
        c.addTransportSocketMatches(Cluster.TransportSocketMatch.newBuilder().setName("tlsMode-disabled")
                .setMatch(Struct.getDefaultInstance())
                .setTransportSocket(TransportSocket.newBuilder().setName("envoy.transport_sockets.raw_buffer")
                        .setTypedConfig(Any.pack(RawBuffer.getDefaultInstance()))));
    }

    /** istiod's SNI of an outbound cluster: {@code outbound_.9080_.v1_.reviews.default.svc.cluster.local}. */
    public static String sni(int port, String subset, String host) {
        return "outbound_." + port + "_." + subset + "_." + host;
    }

    static UpstreamTlsContext istioMutual(String sni, Collection<String> serviceAccounts) {
        CertificateValidationContext.Builder validation = CertificateValidationContext.newBuilder();
        serviceAccounts.stream().sorted().forEach(sa -> validation.addMatchTypedSubjectAltNames(
                SubjectAltNameMatcher.newBuilder().setSanType(SubjectAltNameMatcher.SanType.URI)
                        .setMatcher(StringMatcher.newBuilder().setExact(sa))));
        return UpstreamTlsContext.newBuilder().setSni(sni).setCommonTlsContext(defaultCommon()
                .addTlsCertificateSdsSecretConfigs(sds(DEFAULT_SECRET))
                .setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation)
                        .setValidationContextSdsSecretConfig(sds(ROOT_SECRET)))
                .addAllAlpnProtocols(ISTIO_ALPN)).build();
    }

    /**
     * {@code cluster} with the ALPN istiod gives an istio-proxy's Istio mutual TLS
     * (cluster_tls.go buildUpstreamClusterTLSContext): {@code h2} after {@code istio} when the
     * cluster speaks HTTP/2, and {@code istio-peer-exchange} first only when {@code peerExchange}
     * (PILOT_ENABLE_METADATA_EXCHANGE and not PILOT_DISABLE_MX_ALPN). Plain Envoy keeps
     * {@link #ISTIO_ALPN}: it has no exchange to turn off, and its config stays as it was.
     */
    public static Cluster withIstioProxyAlpn(Cluster cluster, boolean peerExchange) {
        boolean h2 = http2(cluster);
        if (!h2 && peerExchange) {
            return cluster;
        }
        List<String> alpn = new ArrayList<>(peerExchange ? ISTIO_ALPN : List.of("istio"));
        if (h2) {
            alpn.add("h2");
        }
        Cluster.Builder c = cluster.toBuilder();
        if (c.hasTransportSocket()) {
            c.setTransportSocket(withIstioAlpn(c.getTransportSocket(), alpn));
        }
        for (Cluster.TransportSocketMatch.Builder m : c.getTransportSocketMatchesBuilderList()) {
            if (m.hasTransportSocket()) {
                m.setTransportSocket(withIstioAlpn(m.getTransportSocket(), alpn));
            }
        }
        return c.build();
    }

    /** istiod's isHttp2Cluster: the cluster's protocol options say HTTP/2 explicitly. */
    private static boolean http2(Cluster cluster) {
        Any options = cluster.getTypedExtensionProtocolOptionsOrDefault(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS, null);
        try {
            return options != null && options.unpack(HttpProtocolOptions.class).getExplicitHttpConfig()
                    .hasHttp2ProtocolOptions();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("our own HttpProtocolOptions do not unpack", e);
        }
    }

    /** {@code socket} with {@code alpn} if it is Istio mutual TLS (offering {@link #ISTIO_ALPN}), else unchanged. */
    private static TransportSocket withIstioAlpn(TransportSocket socket, List<String> alpn) {
        if (!socket.getTypedConfig().is(UpstreamTlsContext.class)) {
            return socket;
        }
        try {
            UpstreamTlsContext tls = socket.getTypedConfig().unpack(UpstreamTlsContext.class);
            if (!tls.getCommonTlsContext().getAlpnProtocolsList().equals(ISTIO_ALPN)) {
                return socket;
            }
            UpstreamTlsContext.Builder b = tls.toBuilder();
            b.getCommonTlsContextBuilder().clearAlpnProtocols().addAllAlpnProtocols(alpn);
            return socket.toBuilder().setTypedConfig(Any.pack(b.build())).build();
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("our own UpstreamTlsContext does not unpack", e);
        }
    }

    /**
     * istiod's defaultUpstreamCommonTLSContext, the base of every upstream TLS context it builds
     * (ISTIO_MUTUAL, SIMPLE, MUTUAL): TLS 1.2 to 1.3.
     */
    static CommonTlsContext.Builder defaultCommon() {
        return CommonTlsContext.newBuilder().setTlsParams(TlsParameters.newBuilder()
                .setTlsMinimumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_2)
                .setTlsMaximumProtocolVersion(TlsParameters.TlsProtocol.TLSv1_3));
    }

    /** SIMPLE and MUTUAL toward a service outside the mesh: the rule's files, or its credentialName by SDS. */
    static UpstreamTlsContext external(ClientTLSSettings tls) {
        CommonTlsContext.Builder common = defaultCommon();
        CertificateValidationContext.Builder validation = CertificateValidationContext.newBuilder();
        tls.getSubjectAltNamesList().forEach(san -> validation.addMatchTypedSubjectAltNames(
                SubjectAltNameMatcher.newBuilder().setSanType(SubjectAltNameMatcher.SanType.DNS)
                        .setMatcher(StringMatcher.newBuilder().setExact(san))));
        if (!tls.getCredentialName().isEmpty()) {
            // istiod's ApplyCustomSDSToClientCommonTLSContext: the credential and its "-cacert" asked of istiod
            String credential = tls.getCredentialName();
            if (tls.getMode() == ClientTLSSettings.TLSmode.MUTUAL) {
                common.addTlsCertificateSdsSecretConfigs(credentialSds(credential));
            }
            common.setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                    .setDefaultValidationContext(validation)
                    .setValidationContextSdsSecretConfig(credentialSds(credential + CredentialNames.CA_SUFFIX)));
        } else {
            if (!tls.getCaCertificates().isEmpty()) {
                validation.setTrustedCa(DataSource.newBuilder().setFilename(tls.getCaCertificates()));
            } else if (verifies(tls)) {
                // istiod's VERIFY_CERTIFICATE_AT_CLIENT: no CA named means the system's roots, from the agent
                common.setCombinedValidationContext(CommonTlsContext.CombinedCertificateValidationContext.newBuilder()
                        .setDefaultValidationContext(validation).setValidationContextSdsSecretConfig(sds(SYSTEM_ROOTS)));
            }
            if (tls.getMode() == ClientTLSSettings.TLSmode.MUTUAL) {
                common.addTlsCertificates(TlsCertificate.newBuilder()
                        .setCertificateChain(DataSource.newBuilder().setFilename(tls.getClientCertificate()))
                        .setPrivateKey(DataSource.newBuilder().setFilename(tls.getPrivateKey())));
            }
            if (!common.hasCombinedValidationContext()) {
                common.setValidationContext(validation);
            }
        }
        UpstreamTlsContext.Builder ctx = UpstreamTlsContext.newBuilder().setCommonTlsContext(common);
        if (!tls.getSni().isEmpty()) {
            ctx.setSni(tls.getSni());
        }
        return ctx.build();
    }

    /** The agent's SDS resource for the system's trusted roots (istiod's file-root: prefix, path "system"). */
    static final String SYSTEM_ROOTS = "file-root:system";

    /** Whether the server's certificate is verified: unless {@code insecureSkipVerify}. */
    private static boolean verifies(ClientTLSSettings tls) {
        return !(tls.hasInsecureSkipVerify() && tls.getInsecureSkipVerify().getValue());
    }

    /**
     * istiod's setAutoSniAndAutoSanValidation (ENABLE_AUTO_SNI, VERIFY_CERTIFICATE_AT_CLIENT):
     * without an SNI Envoy sends the request's host as SNI, and without subject alt names it
     * checks the server certificate against that host.
     */
    private static void autoSniAndSan(Cluster.Builder c, ClientTLSSettings tls) {
        boolean autoSni = tls.getSni().isEmpty();
        boolean autoSan = autoSni && tls.getSubjectAltNamesCount() == 0 && verifies(tls);
        if (!autoSni) {
            return;
        }
        String key = ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS;
        HttpProtocolOptions.Builder options;
        try {
            options = c.containsTypedExtensionProtocolOptions(key)
                    ? c.getTypedExtensionProtocolOptionsOrThrow(key)
                            .unpack(HttpProtocolOptions.class).toBuilder()
                    : HttpProtocolOptions.newBuilder()
                            .setExplicitHttpConfig(HttpProtocolOptions
                                    .ExplicitHttpConfig.newBuilder().setHttpProtocolOptions(
                                            Http1ProtocolOptions.getDefaultInstance()));
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalStateException("our own HttpProtocolOptions do not unpack", e);
        }
        options.setUpstreamHttpProtocolOptions(UpstreamHttpProtocolOptions.newBuilder()
                .setAutoSni(true).setAutoSanValidation(autoSan));
        c.putTypedExtensionProtocolOptions(key, Any.pack(options.build()));
    }

    /** A secret fetched from the Istio agent over its SDS cluster (istiod's ConstructSdsSecretConfig). */
    public static SdsSecretConfig sds(String name) {
        return SdsSecretConfig.newBuilder().setName(name).setSdsConfig(ConfigSource.newBuilder()
                .setApiConfigSource(ApiConfigSource.newBuilder().setApiType(ApiConfigSource.ApiType.GRPC)
                        .setTransportApiVersion(ApiVersion.V3).setSetNodeOnFirstMessageOnly(true)
                        .addGrpcServices(GrpcService.newBuilder().setEnvoyGrpc(
                                GrpcService.EnvoyGrpc.newBuilder().setClusterName(SDS_CLUSTER))))
                .setResourceApiVersion(ApiVersion.V3)).build();
    }

    /**
     * istiod's ConstructSdsSecretConfigForCredential: {@code builtin://} is the workload's own
     * certificate (and {@code builtin://-cacert} its root) from the local agent; any other name is
     * asked of istiod over ADS as its resource name ({@link CredentialNames#toResourceName}), so a
     * {@code configmap://ns/name-cacert} CA comes from the ConfigMap istiod reads.
     */
    public static SdsSecretConfig credentialSds(String credentialName) {
        if (credentialName.equals(CredentialNames.BUILTIN)) {
            return sds(DEFAULT_SECRET);
        }
        if (credentialName.equals(CredentialNames.BUILTIN + CredentialNames.CA_SUFFIX)) {
            return sds(ROOT_SECRET);
        }
        return SdsSecretConfig.newBuilder().setName(CredentialNames.toResourceName(credentialName))
                .setSdsConfig(ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                        .setResourceApiVersion(ApiVersion.V3)).build();
    }

    private static TransportSocket socket(UpstreamTlsContext ctx) {
        return TransportSocket.newBuilder().setName(TLS_SOCKET).setTypedConfig(Any.pack(ctx)).build();
    }
}
