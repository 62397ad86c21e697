package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.BoolValue;
import com.google.protobuf.Duration;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.UInt32Value;
import io.envoyproxy.envoy.config.cluster.v3.CircuitBreakers;
import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.AggregatedConfigSource;
import io.envoyproxy.envoy.config.core.v3.ApiVersion;
import io.envoyproxy.envoy.config.core.v3.ConfigSource;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.envoyproxy.envoy.extensions.transport_sockets.internal_upstream.v3.InternalUpstreamTransport;
import io.envoyproxy.envoy.extensions.transport_sockets.tls.v3.UpstreamTlsContext;
import io.envoyproxy.envoy.extensions.upstreams.http.v3.HttpProtocolOptions;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * DestinationRule traffic policy on Envoy outbound clusters, each setting checked at the Envoy
 * field istiod maps it to; a PushContext built from a real validating store and the
 * ServiceEntry registry, as the server builds it.
 */
class ClusterTrafficPolicyTest {
    static final String HOST = "web.shop.svc.cluster.local";
    static final long UNLIMITED = 4294967295L;
    static final ProxyScope SCOPE = ProxyScope.of("shop");

    MeshFixture fixture;

    @BeforeEach
    void setUp() throws Exception {
        fixture = new MeshFixture();
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: web, namespace: shop}
                spec:
                  hosts: [web.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 80, name: http, protocol: HTTP}, {number: 8080, name: http-admin, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.0.1, labels: {version: v1}}, {address: 10.0.0.2, labels: {version: v2}}]
                """);
    }

    @AfterEach
    void tearDown() {
        fixture.close();
    }

    void apply(String yaml) throws Exception {
        fixture.apply(yaml);
    }

    void destinationRule(String spec) throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: web, namespace: shop}
                spec:
                  host: web.shop.svc.cluster.local
                """ + spec.indent(2));
    }

    Cluster cluster(int port, String subset, boolean proxyless) {
        return cluster(port, subset, proxyless, new MeshConfigLoader().defaults());
    }

    Cluster cluster(int port, String subset, boolean proxyless, MeshConfig mesh) {
        PushContext push = fixture.push(mesh);
        return ClusterBuilder.build(ClusterNames.outbound(port, subset, HOST), push, SCOPE, proxyless).orElseThrow();
    }

    Cluster cluster(int port, String subset) {
        return cluster(port, subset, false);
    }

    static CircuitBreakers.Thresholds thresholds(Cluster c) {
        assertEquals(1, c.getCircuitBreakers().getThresholdsCount(), c.toString());
        return c.getCircuitBreakers().getThresholds(0);
    }

    static long u(UInt32Value v) {
        return Integer.toUnsignedLong(v.getValue());
    }

    static HttpProtocolOptions httpOptions(Cluster c) throws InvalidProtocolBufferException {
        assertEquals(List.of(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS),
                List.copyOf(c.getTypedExtensionProtocolOptionsMap().keySet()));
        return c.getTypedExtensionProtocolOptionsMap().get(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class);
    }

    static Duration seconds(long s) {
        return Duration.newBuilder().setSeconds(s).build();
    }

    @Test
    void theMeshConnectTimeoutAppliesUnlessTheDestinationRuleSetsOne() throws Exception {
        var mesh = new MeshConfigLoader().defaults().toBuilder().setConnectTimeout(seconds(3)).build();
        assertEquals(seconds(3), cluster(80, "", false, mesh).getConnectTimeout());
        destinationRule("trafficPolicy: {connectionPool: {tcp: {connectTimeout: 7s}}}");
        assertEquals(seconds(7), cluster(80, "", false, mesh).getConnectTimeout());
    }

    @Test
    void withoutDestinationRuleIstiodDefaults() {
        Cluster c = cluster(80, "");
        CircuitBreakers.Thresholds t = thresholds(c);
        assertEquals(UNLIMITED, u(t.getMaxConnections()));
        assertEquals(UNLIMITED, u(t.getMaxPendingRequests()));
        assertEquals(UNLIMITED, u(t.getMaxRequests()));
        assertEquals(UNLIMITED, u(t.getMaxRetries()));
        assertTrue(t.getTrackRemaining());
        assertTrue(t.hasMaxConnections() && t.hasMaxPendingRequests() && t.hasMaxRequests() && t.hasMaxRetries());
        assertEquals(seconds(10), c.getConnectTimeout(), "the mesh default connect timeout");
        assertTrue(c.hasCommonLbConfig());
        assertFalse(c.getCommonLbConfig().hasHealthyPanicThreshold());
        assertFalse(c.hasOutlierDetection());
        assertFalse(c.hasUpstreamConnectionOptions());
        assertEquals(0, c.getTypedExtensionProtocolOptionsCount());
        assertEquals(Cluster.LbPolicy.LEAST_REQUEST, c.getLbPolicy(), "istiod's default algorithm");
    }

    @Test
    void hostLevelConnectionPoolAndOutlierDetection() throws Exception {
        destinationRule("""
                trafficPolicy:
                  loadBalancer: {simple: LEAST_REQUEST}
                  connectionPool:
                    tcp:
                      maxConnections: 100
                      connectTimeout: 3s
                      tcpKeepalive: {probes: 5, time: 7200s, interval: 75s}
                      maxConnectionDuration: 3600s
                      idleTimeout: 1800s
                    http:
                      http1MaxPendingRequests: 20
                      http2MaxRequests: 30
                      maxRetries: 4
                      idleTimeout: 15s
                      maxRequestsPerConnection: 6
                  outlierDetection:
                    consecutive5xxErrors: 5
                    consecutiveGatewayErrors: 0
                    interval: 10s
                    baseEjectionTime: 30s
                    maxEjectionPercent: 50
                    minHealthPercent: 25
                    splitExternalLocalOriginErrors: true
                    consecutiveLocalOriginFailures: 2
                """);
        Cluster c = cluster(80, "");
        assertEquals(Cluster.LbPolicy.LEAST_REQUEST, c.getLbPolicy());
        CircuitBreakers.Thresholds t = thresholds(c);
        assertEquals(100, u(t.getMaxConnections()), "tcp.maxConnections");
        assertEquals(20, u(t.getMaxPendingRequests()), "http.http1MaxPendingRequests");
        assertEquals(30, u(t.getMaxRequests()), "http.http2MaxRequests");
        assertEquals(4, u(t.getMaxRetries()), "http.maxRetries");
        assertTrue(t.getTrackRemaining());
        assertEquals(seconds(3), c.getConnectTimeout(), "tcp.connectTimeout");

        var ka = c.getUpstreamConnectionOptions().getTcpKeepalive();
        assertEquals(5, u(ka.getKeepaliveProbes()));
        assertEquals(7200, u(ka.getKeepaliveTime()));
        assertEquals(75, u(ka.getKeepaliveInterval()));

        HttpProtocolOptions options = httpOptions(c);
        var common = options.getCommonHttpProtocolOptions();
        assertEquals(seconds(15), common.getIdleTimeout(), "http.idleTimeout wins over tcp.idleTimeout");
        assertEquals(6, u(common.getMaxRequestsPerConnection()));
        assertEquals(seconds(3600), common.getMaxConnectionDuration(), "tcp.maxConnectionDuration");
        assertTrue(options.getExplicitHttpConfig().hasHttpProtocolOptions(), "Envoy requires an upstream protocol");

        var od = c.getOutlierDetection();
        assertEquals(0, u(od.getEnforcingSuccessRate()));
        assertTrue(od.hasEnforcingSuccessRate());
        assertEquals(5, u(od.getConsecutive5Xx()));
        assertEquals(100, u(od.getEnforcingConsecutive5Xx()));
        assertTrue(od.hasConsecutiveGatewayFailure(), "set to 0: present, not enforced");
        assertEquals(0, u(od.getConsecutiveGatewayFailure()));
        assertTrue(od.hasEnforcingConsecutiveGatewayFailure());
        assertEquals(0, u(od.getEnforcingConsecutiveGatewayFailure()));
        assertEquals(seconds(10), od.getInterval());
        assertEquals(seconds(30), od.getBaseEjectionTime());
        assertEquals(50, u(od.getMaxEjectionPercent()));
        assertTrue(od.getSplitExternalLocalOriginErrors());
        assertEquals(2, u(od.getConsecutiveLocalOriginFailure()));
        assertEquals(100, u(od.getEnforcingConsecutiveLocalOriginFailure()));
        assertTrue(od.hasEnforcingLocalOriginSuccessRate());
        assertEquals(0, u(od.getEnforcingLocalOriginSuccessRate()));
        assertEquals(25.0, c.getCommonLbConfig().getHealthyPanicThreshold().getValue(), "minHealthPercent");
    }

    @Test
    void unsetValuesLeaveEnvoyDefaults() throws Exception {
        destinationRule("""
                trafficPolicy:
                  connectionPool:
                    tcp: {idleTimeout: 1800s, tcpKeepalive: {time: 60s}}
                  outlierDetection: {consecutive5xxErrors: 2}
                """);
        Cluster c = cluster(80, "");
        CircuitBreakers.Thresholds t = thresholds(c);
        assertEquals(ClusterTrafficPolicy.defaultThresholds(), t);
        assertEquals(seconds(10), c.getConnectTimeout());
        var ka = c.getUpstreamConnectionOptions().getTcpKeepalive();
        assertEquals(60, u(ka.getKeepaliveTime()));
        assertFalse(ka.hasKeepaliveProbes() || ka.hasKeepaliveInterval(), "OS defaults for the rest");
        var common = httpOptions(c).getCommonHttpProtocolOptions();
        assertEquals(seconds(1800), common.getIdleTimeout(), "tcp.idleTimeout without http.idleTimeout");
        assertFalse(common.hasMaxRequestsPerConnection() || common.hasMaxConnectionDuration());
        var od = c.getOutlierDetection();
        assertFalse(od.hasConsecutiveGatewayFailure() || od.hasInterval() || od.hasBaseEjectionTime()
                || od.hasMaxEjectionPercent() || od.getSplitExternalLocalOriginErrors()
                || od.hasEnforcingLocalOriginSuccessRate());
        assertTrue(c.getCommonLbConfig().hasHealthyPanicThreshold(), "unset minHealthPercent: 0, panic mode off");
        assertEquals(0.0, c.getCommonLbConfig().getHealthyPanicThreshold().getValue());
    }

    @Test
    void portLevelSettingsReplaceTheHostPolicyForTheirPort() throws Exception {
        destinationRule("""
                trafficPolicy:
                  connectionPool: {tcp: {maxConnections: 100}}
                  outlierDetection: {consecutive5xxErrors: 5}
                  portLevelSettings:
                  - port: {number: 8080}
                    loadBalancer: {simple: RANDOM}
                    connectionPool: {tcp: {maxConnections: 7}}
                """);
        Cluster admin = cluster(8080, "");
        assertEquals(7, u(thresholds(admin).getMaxConnections()));
        assertEquals(Cluster.LbPolicy.RANDOM, admin.getLbPolicy());
        assertFalse(admin.hasOutlierDetection(), "not inherited from the host level");
        Cluster web = cluster(80, "");
        assertEquals(100, u(thresholds(web).getMaxConnections()));
        assertEquals(Cluster.LbPolicy.LEAST_REQUEST, web.getLbPolicy());
        assertEquals(5, u(web.getOutlierDetection().getConsecutive5Xx()));
    }

    @Test
    void subsetPolicyOverridesAndMergesWithTheHostPolicy() throws Exception {
        destinationRule("""
                trafficPolicy:
                  loadBalancer: {simple: RANDOM}
                  connectionPool: {tcp: {maxConnections: 100}}
                subsets:
                - name: v1
                  labels: {version: v1}
                  trafficPolicy:
                    connectionPool: {tcp: {maxConnections: 1}}
                - name: v2
                  labels: {version: v2}
                  trafficPolicy:
                    outlierDetection: {consecutive5xxErrors: 9}
                    portLevelSettings:
                    - port: {number: 8080}
                      connectionPool: {http: {maxRetries: 2}}
                """);
        Cluster v1 = cluster(80, "v1");
        assertEquals(1, u(thresholds(v1).getMaxConnections()), "the subset's connection pool");
        assertEquals(Cluster.LbPolicy.RANDOM, v1.getLbPolicy(), "the host's load balancer");
        assertFalse(v1.hasOutlierDetection());

        Cluster v2 = cluster(80, "v2");
        assertEquals(100, u(thresholds(v2).getMaxConnections()), "the host's connection pool");
        assertEquals(9, u(v2.getOutlierDetection().getConsecutive5Xx()), "and the subset's outlier detection");
        assertEquals(Cluster.LbPolicy.RANDOM, v2.getLbPolicy());

        Cluster v2admin = cluster(8080, "v2");
        assertEquals(UNLIMITED, u(thresholds(v2admin).getMaxConnections()), "the subset's port entry replaces it");
        assertEquals(2, u(thresholds(v2admin).getMaxRetries()));
        assertFalse(v2admin.hasOutlierDetection());
        assertEquals(Cluster.LbPolicy.LEAST_REQUEST, v2admin.getLbPolicy());

        assertEquals(100, u(thresholds(cluster(80, "")).getMaxConnections()), "the service's own cluster");
    }

    @Test
    void proxylessClustersGetOnlyTheLoadBalancer() throws Exception {
        destinationRule("""
                trafficPolicy:
                  loadBalancer: {consistentHash: {httpHeaderName: x-user}}
                  connectionPool: {tcp: {maxConnections: 100, connectTimeout: 3s}, http: {idleTimeout: 15s}}
                  outlierDetection: {consecutive5xxErrors: 5, minHealthPercent: 20}
                  portLevelSettings:
                  - port: {number: 80}
                    loadBalancer: {simple: ROUND_ROBIN}
                subsets:
                - name: v1
                  labels: {version: v1}
                  trafficPolicy:
                    connectionPool: {tcp: {maxConnections: 1}}
                """);
        ConfigSource ads = ConfigSource.newBuilder().setAds(AggregatedConfigSource.getDefaultInstance())
                .setInitialFetchTimeout(Duration.getDefaultInstance())
                .setResourceApiVersion(ApiVersion.V3).build();
        for (String subset : List.of("", "v1")) {
            String name = ClusterNames.outbound(80, subset, HOST);
            Cluster expected = Cluster.newBuilder().setName(name).setType(Cluster.DiscoveryType.EDS)
                    .setLbPolicy(Cluster.LbPolicy.RING_HASH)
                    .setEdsClusterConfig(Cluster.EdsClusterConfig.newBuilder().setServiceName(name).setEdsConfig(ads))
                    .build();
            assertEquals(expected, cluster(80, subset, true), "as before the Envoy traffic policy: " + name);
        }
        assertEquals(Cluster.LbPolicy.ROUND_ROBIN, cluster(80, "", false).getLbPolicy(), "Envoy: the port entry");
    }

    // --- upstream TLS ---

    static UpstreamTlsContext tlsContext(
            TransportSocket socket) throws InvalidProtocolBufferException {
        assertEquals(UpstreamTls.TLS_SOCKET, socket.getName());
        return socket.getTypedConfig().unpack(UpstreamTlsContext.class);
    }

    @Test
    void withoutARuleTlsMeshServicesGetAutoMtlsByEndpointLabel() throws Exception {
        Cluster c = cluster(80, "");
        assertTrue(!c.hasTransportSocket(), "auto mTLS decides per endpoint, not for the cluster");
        assertEquals(List.of("tlsMode-istio", "tlsMode-disabled"),
                c.getTransportSocketMatchesList().stream().map(Cluster.TransportSocketMatch::getName).toList());
        var istio = c.getTransportSocketMatches(0);
        assertEquals("istio", istio.getMatch().getFieldsOrThrow("tlsMode").getStringValue());
        var ctx = tlsContext(istio.getTransportSocket());
        assertEquals("outbound_.80_._.web.shop.svc.cluster.local", ctx.getSni());
        var common = ctx.getCommonTlsContext();
        assertEquals("default", common.getTlsCertificateSdsSecretConfigs(0).getName());
        assertEquals("sds-grpc", common.getTlsCertificateSdsSecretConfigs(0).getSdsConfig().getApiConfigSource()
                .getGrpcServices(0).getEnvoyGrpc().getClusterName());
        assertEquals("ROOTCA", common.getCombinedValidationContext().getValidationContextSdsSecretConfig().getName());
        assertEquals(List.of("istio-peer-exchange", "istio"), common.getAlpnProtocolsList());
        assertEquals(0, c.getTransportSocketMatches(1).getMatch().getFieldsCount(), "everything else: plaintext");
        assertEquals("envoy.transport_sockets.raw_buffer", c.getTransportSocketMatches(1).getTransportSocket().getName());
    }

    @Test
    void istioMutualFromTheRuleChecksTheServiceAccountsOfTheEndpoints() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: reviews, namespace: shop}
                spec:
                  hosts: [reviews.shop.svc.cluster.local]
                  ports: [{number: 9080, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.0.1.1, serviceAccount: reviews, labels: {version: v1}}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: reviews, namespace: shop}
                spec:
                  host: reviews.shop.svc.cluster.local
                  trafficPolicy: {tls: {mode: ISTIO_MUTUAL}}
                  subsets: [{name: v1, labels: {version: v1}}]
                """);
        PushContext push = fixture.push();
        Cluster c = ClusterBuilder.build("outbound|9080|v1|reviews.shop.svc.cluster.local", push, SCOPE, false).orElseThrow();
        assertEquals(0, c.getTransportSocketMatchesCount(), "the rule's TLS, not auto mTLS");
        var ctx = tlsContext(c.getTransportSocket());
        assertEquals("outbound_.9080_.v1_.reviews.shop.svc.cluster.local", ctx.getSni());
        assertEquals(List.of("spiffe://cluster.local/ns/shop/sa/reviews"), ctx.getCommonTlsContext()
                .getCombinedValidationContext().getDefaultValidationContext().getMatchTypedSubjectAltNamesList().stream()
                .map(m -> m.getMatcher().getExact()).toList());
    }

    @Test
    void disableFromTheRuleMeansPlaintextWithoutAutoMtls() throws Exception {
        destinationRule("trafficPolicy: {tls: {mode: DISABLE}}");
        Cluster c = cluster(80, "");
        assertTrue(!c.hasTransportSocket() && c.getTransportSocketMatchesCount() == 0, c.toString());
    }

    @Test
    void simpleTlsWithFilesAndMutualWithACredentialName() throws Exception {
        destinationRule("""
                trafficPolicy:
                  tls: {mode: SIMPLE, caCertificates: /etc/certs/ca.pem, sni: web.example.com, subjectAltNames: [web.example.com]}
                  portLevelSettings:
                  - port: {number: 8080}
                    tls: {mode: MUTUAL, credentialName: web-client}
                """);
        var simple = tlsContext(cluster(80, "").getTransportSocket());
        assertEquals("web.example.com", simple.getSni());
        var validation = simple.getCommonTlsContext().getValidationContext();
        assertEquals("/etc/certs/ca.pem", validation.getTrustedCa().getFilename());
        assertEquals("web.example.com", validation.getMatchTypedSubjectAltNames(0).getMatcher().getExact());
        assertEquals(0, simple.getCommonTlsContext().getTlsCertificatesCount(), "SIMPLE presents no client certificate");

        PushContext push = fixture.push(new MeshConfigLoader().defaults());
        Cluster atGateway = ClusterBuilder.build(ClusterNames.outbound(8080, "", HOST), push, SCOPE,
                ClusterBuilder.Client.GATEWAY).orElseThrow();
        var mutual = tlsContext(atGateway.getTransportSocket()).getCommonTlsContext();
        assertEquals("kubernetes://web-client", mutual.getTlsCertificateSdsSecretConfigs(0).getName());
        assertEquals("kubernetes://web-client-cacert",
                mutual.getCombinedValidationContext().getValidationContextSdsSecretConfig().getName());
        Cluster atSidecar = cluster(8080, "");
        assertTrue(!atSidecar.hasTransportSocket() && atSidecar.getTransportSocketMatchesCount() == 0,
                "a credentialName is a gateway's: a sidecar's cluster gets no TLS from it, as istiod's: " + atSidecar);
    }

    @Test
    void simpleTlsWithoutCaOrSniVerifiesAgainstSystemRootsWithAutoSniAndSan() throws Exception {
        destinationRule("""
                trafficPolicy:
                  tls: {mode: SIMPLE}
                  portLevelSettings:
                  - port: {number: 8080}
                    tls: {mode: SIMPLE, insecureSkipVerify: true}
                """);
        Cluster c = cluster(80, "");
        var common = tlsContext(c.getTransportSocket()).getCommonTlsContext();
        assertEquals("file-root:system", common.getCombinedValidationContext().getValidationContextSdsSecretConfig()
                .getName(), "no CA named: the system's roots, from the agent");
        var options = c.getTypedExtensionProtocolOptionsOrThrow(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class);
        assertTrue(options.getUpstreamHttpProtocolOptions().getAutoSni(), "the request's host is the SNI");
        assertTrue(options.getUpstreamHttpProtocolOptions().getAutoSanValidation(), "and the certificate's name");
        assertTrue(options.hasExplicitHttpConfig(), "Envoy requires an upstream protocol choice");

        Cluster insecure = cluster(8080, "");
        var skip = tlsContext(insecure.getTransportSocket()).getCommonTlsContext();
        assertFalse(skip.hasCombinedValidationContext(), "insecureSkipVerify: nothing to verify against");
        assertFalse(insecure.getTypedExtensionProtocolOptionsOrThrow(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class)
                .getUpstreamHttpProtocolOptions().getAutoSanValidation());
    }

    @Test
    void http2AndGrpcPortsAndUpgradedHttpPortsSpeakHttp2Upstream() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: rpc, namespace: shop}
                spec:
                  hosts: [rpc.shop.svc.cluster.local]
                  location: MESH_INTERNAL
                  ports: [{number: 9090, name: grpc, protocol: GRPC}, {number: 8080, name: http, protocol: HTTP}]
                  resolution: STATIC
                  endpoints: [{address: 10.9.9.8}]
                ---
                apiVersion: networking.istio.io/v1
                kind: DestinationRule
                metadata: {name: rpc, namespace: shop}
                spec:
                  host: rpc.shop.svc.cluster.local
                  trafficPolicy:
                    connectionPool: {http: {maxConcurrentStreams: 50, idleTimeout: 30s}}
                    portLevelSettings:
                    - port: {number: 8080}
                      connectionPool: {http: {h2UpgradePolicy: UPGRADE}}
                """);
        PushContext push = fixture.push();
        Cluster grpc = ClusterBuilder.build("outbound|9090||rpc.shop.svc.cluster.local", push, SCOPE, false).orElseThrow();
        var options = grpc.getTypedExtensionProtocolOptionsOrThrow(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class);
        assertTrue(options.getExplicitHttpConfig().hasHttp2ProtocolOptions(), "gRPC needs HTTP/2 upstream");
        assertEquals(50, options.getExplicitHttpConfig().getHttp2ProtocolOptions().getMaxConcurrentStreams().getValue());
        assertEquals(seconds(30), options.getCommonHttpProtocolOptions().getIdleTimeout(), "pool options kept");

        Cluster upgraded = ClusterBuilder.build("outbound|8080||rpc.shop.svc.cluster.local", push, SCOPE, false)
                .orElseThrow();
        assertTrue(upgraded.getTypedExtensionProtocolOptionsOrThrow(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class)
                .getExplicitHttpConfig().hasHttp2ProtocolOptions(), "h2UpgradePolicy UPGRADE");
        Cluster plain = cluster(80, "");
        assertFalse(plain.containsTypedExtensionProtocolOptions(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                && plain.getTypedExtensionProtocolOptionsOrThrow(ClusterTrafficPolicy.HTTP_PROTOCOL_OPTIONS)
                .unpack(HttpProtocolOptions.class)
                .getExplicitHttpConfig().hasHttp2ProtocolOptions(), "plain HTTP stays HTTP/1.1");
    }

    @Test
    void noAutoMtlsForMeshExternalServicesOrWhenTheMeshTurnsItOff() throws Exception {
        apply("""
                apiVersion: networking.istio.io/v1
                kind: ServiceEntry
                metadata: {name: ext, namespace: shop}
                spec:
                  hosts: [api.example.com]
                  location: MESH_EXTERNAL
                  ports: [{number: 443, name: tls, protocol: TLS}]
                  resolution: STATIC
                  endpoints: [{address: 10.9.9.9}]
                """);
        PushContext push = fixture.push();
        Cluster ext = ClusterBuilder.build("outbound|443||api.example.com", push, SCOPE, false).orElseThrow();
        assertEquals(0, ext.getTransportSocketMatchesCount());
        var off = new MeshConfigLoader().defaults().toBuilder()
                .setEnableAutoMtls(BoolValue.of(false)).build();
        assertEquals(0, cluster(80, "", false, off).getTransportSocketMatchesCount());
    }

    static Stream<Arguments> localityWeightedCases() {
        return Stream.of(
                Arguments.of("outlier detection alone", false, "trafficPolicy: {outlierDetection: {consecutive5xxErrors: 3}}"),
                Arguments.of("distribute", true, """
                        trafficPolicy:
                          loadBalancer: {localityLbSetting: {distribute: [{from: r1/*, to: {"r1/*": 100}}]}}
                        """),
                Arguments.of("failover without outlier detection", false, """
                        trafficPolicy:
                          loadBalancer: {localityLbSetting: {failover: [{from: r1, to: r2}]}}
                        """),
                Arguments.of("failoverPriority with outlier detection", true, """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer: {localityLbSetting: {failoverPriority: [topology.kubernetes.io/zone]}}
                        """),
                Arguments.of("failover with outlier detection, enabled: false", false, """
                        trafficPolicy:
                          outlierDetection: {consecutive5xxErrors: 3}
                          loadBalancer: {localityLbSetting: {enabled: false, failover: [{from: r1, to: r2}]}}
                        """));
    }

    /**
     * istiod's LocalityLBSettings.ApplyToCluster (loadbalancer.go): locality_weighted_lb_config
     * with distribute, or with outlier detection and failover/failoverPriority rules; never
     * for outlier detection alone (it would change how LEAST_REQUEST picks endpoints).
     */
    @ParameterizedTest(name = "{0}")
    @MethodSource("localityWeightedCases")
    void localityWeightedLbConfig(String name, boolean weighted, String rule) throws Exception {
        destinationRule(rule);
        assertEquals(weighted, cluster(80, "").getCommonLbConfig().hasLocalityWeightedLbConfig());
    }

    // ---- HBONE sent (istiod's cluster_tls.go applyHBONETransportSocketMatches) ----------------

    /** The cluster of port 80 while sidecars and gateways send HBONE, with the rule's {@code tls} ("" for no rule). */
    Cluster hboneCluster(String tls) throws Exception {
        if (!tls.isEmpty()) {
            destinationRule("trafficPolicy: {tls: " + tls + "}");
        }
        return ClusterBuilder.build(ClusterNames.outbound(80, "", HOST), fixture.pushSendingHbone(), SCOPE).orElseThrow();
    }

    static List<String> matchNames(Cluster c) {
        return c.getTransportSocketMatchesList().stream().map(Cluster.TransportSocketMatch::getName).toList();
    }

    /** The first match: {@code hbone} for endpoints marked {@code tunnel: http}, an internal upstream around what it carries. */
    static InternalUpstreamTransport hbone(Cluster c) throws InvalidProtocolBufferException {
        Cluster.TransportSocketMatch m = c.getTransportSocketMatches(0);
        assertEquals("hbone", m.getName());
        assertEquals("http", m.getMatch().getFieldsOrThrow("tunnel").getStringValue());
        return m.getTransportSocket().getTypedConfig().unpack(InternalUpstreamTransport.class);
    }

    @Test
    void withHboneAutoMtlsTriesHboneThenIstioMutualTlsThenPlaintext() throws Exception {
        Cluster c = hboneCluster("");
        assertEquals(List.of("hbone", "tlsMode-istio", "tlsMode-disabled"), matchNames(c));
        assertEquals("envoy.transport_sockets.raw_buffer", hbone(c).getTransportSocket().getName());
        assertFalse(c.hasTransportSocket());
        assertEquals(List.of("tlsMode-istio", "tlsMode-disabled"), matchNames(cluster(80, "")), "without HBONE: as before");
    }

    @Test
    void withHboneTheRulesIstioMutualTlsIsWhatAnEndpointWithoutHboneGets() throws Exception {
        Cluster c = hboneCluster("{mode: ISTIO_MUTUAL}");
        assertEquals(List.of("hbone", "tlsMode-istio"), matchNames(c));
        assertEquals(0, c.getTransportSocketMatches(1).getMatch().getFieldsCount(), "matches every other endpoint");
        assertTrue(c.getTransportSocketMatches(1).getTransportSocket().getTypedConfig().is(UpstreamTlsContext.class));
        assertFalse(c.hasTransportSocket());
    }

    @Test
    void withHboneTheRulesOwnTlsGoesInsideTheTunnelToo() throws Exception {
        Cluster c = hboneCluster("{mode: SIMPLE, sni: web.example}");
        assertEquals(List.of("hbone", "user"), matchNames(c));
        assertEquals("web.example", hbone(c).getTransportSocket().getTypedConfig().unpack(UpstreamTlsContext.class)
                .getSni());
        assertEquals(c.getTransportSocketMatches(1).getTransportSocket(), hbone(c).getTransportSocket());
    }

    @Test
    void withHboneADisabledRuleSendsHboneOrPlaintext() throws Exception {
        Cluster c = hboneCluster("{mode: DISABLE}");
        assertEquals(List.of("hbone", "tlsMode-disabled"), matchNames(c));
        assertEquals("envoy.transport_sockets.raw_buffer", c.getTransportSocketMatches(1).getTransportSocket().getName());
    }
}
