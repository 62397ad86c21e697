package io.meshpilot.mesh;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Mesh config files read as istiod reads them: defaults, overrides, and errors with lines. */
class MeshConfigLoaderTest {
    private final MeshConfigLoader loader = new MeshConfigLoader();

    @Test
    void defaultsAreIstios() {
        MeshConfig m = loader.defaults();
        assertEquals("cluster.local", m.getTrustDomain());
        assertEquals("istio-system", m.getRootNamespace());
        assertEquals(MeshConfig.OutboundTrafficPolicy.Mode.ALLOW_ANY, m.getOutboundTrafficPolicy().getMode());
        assertTrue(m.getEnableAutoMtls().getValue());
        assertEquals(10, m.getConnectTimeout().getSeconds());
        assertEquals(15001, m.getProxyListenPort());
        assertEquals(15006, m.getProxyInboundListenPort());
        assertEquals("istiod.istio-system.svc:15012", m.getDefaultConfig().getDiscoveryAddress());
        assertEquals(45, m.getDefaultConfig().getDrainDuration().getSeconds());
        assertEquals(List.of("*"), m.getDefaultServiceExportToList());
        assertTrue(m.getLocalityLbSetting().getEnabled().getValue());
    }

    @Test
    void missingFileMeansDefaults(@TempDir Path dir) throws Exception {
        assertSame(loader.defaults(), loader.loadMesh(dir.resolve("absent")));
        assertEquals(MeshNetworks.getDefaultInstance(), loader.loadNetworks(dir.resolve("absent")));
    }

    @Test
    void fileFieldsOverrideDefaultsAndListsReplace() throws Exception {
        MeshConfig m = loader.parseMesh("mesh", """
                trustDomain: example.org
                enableAutoMtls: false
                connectTimeout: 1m30s
                defaultServiceExportTo: ["."]
                outboundTrafficPolicy: {mode: REGISTRY_ONLY}
                defaultConfig:
                  discoveryAddress: istiod.mesh.svc:15012
                  proxyMetadata: {ISTIO_META_DNS_CAPTURE: "true"}
                extensionProviders:
                - name: prometheus
                  prometheus: {}
                - name: otel
                  opentelemetry: {service: otel.observability.svc.cluster.local, port: 4317}
                """);
        assertEquals("example.org", m.getTrustDomain());
        assertFalse(m.getEnableAutoMtls().getValue(), "an explicit false must beat the default true");
        assertEquals(90, m.getConnectTimeout().getSeconds(), "Go-style durations are accepted as istiod does");
        assertEquals(List.of("."), m.getDefaultServiceExportToList(), "a list in the file replaces the default list");
        assertEquals(MeshConfig.OutboundTrafficPolicy.Mode.REGISTRY_ONLY, m.getOutboundTrafficPolicy().getMode());
        assertEquals("istiod.mesh.svc:15012", m.getDefaultConfig().getDiscoveryAddress());
        assertEquals(45, m.getDefaultConfig().getDrainDuration().getSeconds(), "defaultConfig merges field by field");
        assertEquals("true", m.getDefaultConfig().getProxyMetadataMap().get("ISTIO_META_DNS_CAPTURE"));
        List<String> providers = m.getExtensionProvidersList().stream().map(p -> p.getName()).toList();
        assertEquals(List.of("prometheus", "otel", "stackdriver", "envoy"), providers,
                "providers merge by name: the file's first, defaults not redefined kept");
        assertEquals("istio-system", m.getRootNamespace(), "rootNamespace default kept");
    }

    @Test
    void snakeCaseKeysWork() throws Exception {
        MeshConfig m = loader.parseMesh("mesh", "trust_domain: a.b\nroot_namespace: ops\n");
        assertEquals("a.b", m.getTrustDomain());
        assertEquals("ops", m.getRootNamespace());
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "unknown field          | 'trustDomain: a\\nnotAField: 1'                       | 2 | notAField",
            "unknown nested field   | 'defaultConfig:\\n  drainDuration: 5s\\n  bogus: x'   | 3 | defaultConfig.bogus",
            "bad enum               | 'outboundTrafficPolicy:\\n  mode: SOMETIMES'          | 2 | SOMETIMES",
            "bad duration           | 'connectTimeout: soon'                                | 1 | connectTimeout",
            "string for a number    | 'proxyListenPort: abc'                                | 1 | proxyListenPort",
            "list for an object     | 'defaultConfig: [1, 2]'                               | 1 | defaultConfig",
            "port out of range      | 'trustDomain: a\\nproxyListenPort: 70000'             | 2 | proxyListenPort",
            "zero port              | 'proxyListenPort: 0'                                  | 1 | proxyListenPort",
            "sub-ms duration        | 'connectTimeout: 0.0005s'                             | 1 | connectTimeout",
            "bad discovery address  | 'defaultConfig:\\n  discoveryAddress: nohostport'     | 2 | discoveryAddress",
            "bad exportTo           | 'defaultServiceExportTo:\\n- Not_A_NS'                | 2 | defaultServiceExportTo[0]",
            "empty trust domain     | 'trustDomain: \"\"'                                   | 1 | trustDomain",
            "duplicate provider     | 'extensionProviders:\\n- {name: a, prometheus: {}}\\n- {name: a, prometheus: {}}' | 3 | extensionProviders[1].name",
            "broken YAML            | 'trustDomain: [unclosed'                              | 1 | invalid YAML",
            "duplicate key          | 'trustDomain: a\\ntrustDomain: b'                     | 2 | trustDomain",
            "two documents          | 'trustDomain: a\\n---\\ntrustDomain: b'               | 3 | one YAML document",
            "oneof twice            | 'extensionProviders:\\n- name: x\\n  prometheus: {}\\n  zipkin: {service: z, port: 9411}' | 4 | only one of"})
    void invalidConfigNamesLineAndField(String name, String yaml, int line, String mentions) {
        MeshConfigException e = assertThrows(MeshConfigException.class,
                () -> loader.parseMesh("mesh.yaml", yaml.replace("\\n", "\n")));
        assertEquals(line, e.line(), e.getMessage());
        assertTrue(e.getMessage().contains(mentions), e.getMessage());
        assertTrue(e.getMessage().startsWith("mesh.yaml:" + line + ": "), e.getMessage());
    }

    @Test
    void aliasBombIsRefusedNotExpanded() {
        StringBuilder y = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        char prev = 'a';
        for (char c = 'b'; c <= 'k'; c++) {
            y.append(c).append(": &").append(c).append(" [");
            for (int i = 0; i < 10; i++) {
                y.append(i == 0 ? "" : ", ").append('*').append(prev);
            }
            y.append("]\n");
            prev = c;
        }
        MeshConfigException e = assertThrows(MeshConfigException.class, () -> loader.parseMesh("bomb", y.toString()));
        assertTrue(e.getMessage().contains("alias") || e.getMessage().contains("expands"), e.getMessage());
    }

    @Test
    void networksFileLoadsAndValidates(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("meshNetworks");
        Files.writeString(f, """
                networks:
                  network1:
                    endpoints:
                    - fromRegistry: Kubernetes
                    gateways:
                    - address: 192.0.2.10
                      port: 15443
                """);
        MeshNetworks n = loader.loadNetworks(f);
        assertEquals(15443, n.getNetworksMap().get("network1").getGateways(0).getPort());
        Files.writeString(f, "networks:\n  n1:\n    gateways:\n    - port: 15443\n");
        MeshConfigException e = assertThrows(MeshConfigException.class, () -> loader.loadNetworks(f));
        assertTrue(e.getMessage().contains("registryServiceName or address"), e.getMessage());
        assertEquals(4, e.line(), e.getMessage());
    }

    @Test
    void aGatewayGivenByHostnameLoads() throws Exception {
        // the discovery server resolves it (GatewayNameCache), as istiod with RESOLVE_HOSTNAME_GATEWAYS
        MeshNetworks n = loader.parseNetworks("meshNetworks", """
                networks:
                  n1:
                    endpoints: [{fromRegistry: c1}]
                    gateways: [{address: 192.0.2.1, port: 15443}, {address: ew.example.com, port: 15443}]
                """);
        assertEquals(2, n.getNetworksMap().get("n1").getGatewaysCount(), "istiod accepts both");
    }

    @Test
    void networkEndpointCidrIsReadAsIstiodReadsIt(@TempDir Path dir) throws Exception {
        Path f = dir.resolve("meshNetworks");
        Files.writeString(f, "networks:\n  n1:\n    endpoints:\n    - fromCidr: 10.0.0.0/8\n    - fromCidr: 2001:db8::1\n");
        assertEquals(2, loader.loadNetworks(f).getNetworksMap().get("n1").getEndpointsCount());
        for (String bad : new String[] {"010.0.0.0/8", "10.0.0.0/+8", "10.0.0.0/33", "example.com"}) {
            Files.writeString(f, "networks:\n  n1:\n    endpoints:\n    - fromCidr: \"" + bad + "\"\n");
            MeshConfigException e = assertThrows(MeshConfigException.class, () -> loader.loadNetworks(f), bad);
            assertTrue(e.getMessage().contains("fromCidr") && e.getMessage().contains(bad), e.getMessage());
        }
    }
}
