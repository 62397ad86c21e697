package io.meshpilot.config.kube.gateway;

import io.meshpilot.config.kube.gateway.GatewayServices.NamedPort;
import io.meshpilot.config.kube.gateway.GatewayServices.PolicyTarget;
import io.meshpilot.config.kube.gateway.GatewayServices.ServiceView;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What istiod's TestConvertResources (pilot/pkg/config/kube/gateway/conversion_test.go at
 * 86c9f01) gives every case besides its input YAML, rewritten in Java: the model services of
 * its PushContext ({@code services}, with one instance per port whose endpoint port is 8080 for
 * the first port "to make sure we test mismatch" and 0 for the others), the Secrets and
 * ConfigMaps of {@code objects}, the Namespace {@code readConfig} creates for each namespace
 * the input uses, and the settings and feature flags the test sets.
 */
public final class IstiodConversionFixtures {
    public static final String DOMAIN_SUFFIX = "domain.suffix";
    /** constants.DefaultClusterName. */
    public static final String CLUSTER_ID = "Kubernetes";
    /** The label readConfig puts on each Namespace: the namespace name up to its first '-'. */
    public static final String TEST_NAME_PART_LABEL = "istio.io/test-name-part";

    /** istiod's {@code ports}: the ports of most fixture services. */
    private static final List<Integer> PORTS = List.of(80, 34000, 34001);
    /** istiod's {@code inferencePoolPorts}. */
    private static final List<Integer> INFERENCE_POOL_PORTS = List.of(54321);
    /** The labels istiod's conversion reads from an InferencePool's shadow service (inferencepool_collection.go). */
    private static final String EXTENSION_SERVICE = "istio.io/inferencepool-extension-service";
    private static final String EXTENSION_PORT = "istio.io/inferencepool-extension-port";
    private static final String EXTENSION_FAILURE_MODE = "istio.io/inferencepool-extension-failure-mode";

    /**
     * https://github.com/kubernetes/kubernetes/blob/v1.25.4/staging/src/k8s.io/kubectl/pkg/cmd/create/create_secret_tls_test.go#L31,
     * as istiod's test quotes it: a self-signed RSA certificate (expired 2015) and its key.
     */
    static final String RSA_CERT_PEM = """
            -----BEGIN CERTIFICATE-----
            MIIB0zCCAX2gAwIBAgIJAI/M7BYjwB+uMA0GCSqGSIb3DQEBBQUAMEUxCzAJBgNV
            BAYTAkFVMRMwEQYDVQQIDApTb21lLVN0YXRlMSEwHwYDVQQKDBhJbnRlcm5ldCBX
            aWRnaXRzIFB0eSBMdGQwHhcNMTIwOTEyMjE1MjAyWhcNMTUwOTEyMjE1MjAyWjBF
            MQswCQYDVQQGEwJBVTETMBEGA1UECAwKU29tZS1TdGF0ZTEhMB8GA1UECgwYSW50
            ZXJuZXQgV2lkZ2l0cyBQdHkgTHRkMFwwDQYJKoZIhvcNAQEBBQADSwAwSAJBANLJ
            hPHhITqQbPklG3ibCVxwGMRfp/v4XqhfdQHdcVfHap6NQ5Wok/4xIA+ui35/MmNa
            rtNuC+BdZ1tMuVCPFZcCAwEAAaNQME4wHQYDVR0OBBYEFJvKs8RfJaXTH08W+SGv
            zQyKn0H8MB8GA1UdIwQYMBaAFJvKs8RfJaXTH08W+SGvzQyKn0H8MAwGA1UdEwQF
            MAMBAf8wDQYJKoZIhvcNAQEFBQADQQBJlffJHybjDGxRMqaRmDhX0+6v02TUKZsW
            r5QuVbpQhH6u+0UgcW0jp9QwpxoPTLTWGXEWBBBurxFwiCBhkQ+V
            -----END CERTIFICATE-----
            """;
    static final String RSA_KEY_PEM = """
            -----BEGIN RSA PRIVATE KEY-----
            MIIBOwIBAAJBANLJhPHhITqQbPklG3ibCVxwGMRfp/v4XqhfdQHdcVfHap6NQ5Wo
            k/4xIA+ui35/MmNartNuC+BdZ1tMuVCPFZcCAwEAAQJAEJ2N+zsR0Xn8/Q6twa4G
            6OB1M1WO+k+ztnX/1SvNeWu8D6GImtupLTYgjZcHufykj09jiHmjHx8u8ZZB/o1N
            MQIhAPW+eyZo7ay3lMz1V01WVjNKK9QSn1MJlb06h/LuYv9FAiEA25WPedKgVyCW
            SmUwbPw8fnTcpqDWE3yTO3vKcebqMSsCIBF3UmVue8YU3jybC3NxuXq3wNm34R8T
            xVLHwDXh/6NJAiEAl2oHGGLz64BuAfjKrqwz7qMYr9HCLIe/YsoWq/olzScCIQDi
            D2lWusoe2/nEqfDVVWGWlyJ7yOmqaVm/iNUN9B2N2g==
            -----END RSA PRIVATE KEY-----
            """;

    private IstiodConversionFixtures() {
    }

    /**
     * istiod's TestConvertResources settings: alpha APIs and ambient waypoints (its init()) and the
     * inference extension on.
     */
    public static GatewayApiInputs.Settings settings() {
        GatewayApiInputs.Settings d = GatewayApiInputs.Settings.defaults(DOMAIN_SUFFIX, CLUSTER_ID);
        return new GatewayApiInputs.Settings(d.domainSuffix(), d.clusterId(), d.controllerName(), d.defaultGatewayClass(),
                d.manualDeployment(), d.multiNetworkGatewayApi(), true, true, d.mcsHosts(), d.mcsApiGroup(), true);
    }

    /** The test's {@code services} with their instances, in its order. */
    public static TestGatewayServices services() {
        TestGatewayServices.Builder b = TestGatewayServices.builder()
                .add(service("istio-ingressgateway.istio-system.svc.domain.suffix", "istio-system", Map.of(),
                        List.of(80, 443, 34000, 34001), List.of("1.2.3.4")))
                .add(service("example.com", "istio-system", PORTS))
                .add(service("httpbin.default.svc.domain.suffix", "default", PORTS))
                .add(inferencePoolService("infpool-gen", "ext-proc-svc", INFERENCE_POOL_PORTS))
                .add(inferencePoolService("infpool-gen2", "ext-proc-svc-2", INFERENCE_POOL_PORTS))
                .add(inferencePoolService("infpool-model1", "model1-epp", PORTS))
                .add(inferencePoolService("infpool-model2", "model2-epp", PORTS));
        for (String[] hostAndNamespace : new String[][] {
                {"httpbin-apple.apple.svc.domain.suffix", "apple"},
                {"httpbin-banana.banana.svc.domain.suffix", "banana"},
                {"httpbin-second.default.svc.domain.suffix", "default"},
                {"httpbin-wildcard.default.svc.domain.suffix", "default"},
                {"foo-svc.default.svc.domain.suffix", "default"},
                {"httpbin-other.default.svc.domain.suffix", "default"},
                {"example.default.svc.domain.suffix", "default"},
                {"echo.default.svc.domain.suffix", "default"},
                {"httpbin.cert.svc.domain.suffix", "cert"},
                {"my-svc.service.svc.domain.suffix", "service"},
                {"google.com", "default"},
                {"a-example.allowed-1.svc.domain.suffix", "allowed-1"},
                {"a-example.allowed-2.svc.domain.suffix", "allowed-2"},
                {"b-example.allowed-1.svc.domain.suffix", "allowed-1"},
                {"svc2.allowed-1.svc.domain.suffix", "allowed-1"},
                {"svc2.allowed-2.svc.domain.suffix", "allowed-2"},
                {"svc1.allowed-1.svc.domain.suffix", "allowed-1"},
                {"svc3.allowed-2.svc.domain.suffix", "allowed-2"},
                {"svc4.default.svc.domain.suffix", "default"},
                {"httpbin.group-namespace1.svc.domain.suffix", "group-namespace1"},
                {"httpbin.group-namespace2.svc.domain.suffix", "group-namespace2"},
                {"httpbin-zero.default.svc.domain.suffix", "default"},
                {"httpbin.istio-system.svc.domain.suffix", "istio-system"},
                {"httpbin-mirror.default.svc.domain.suffix", "default"},
                {"httpbin-foo.default.svc.domain.suffix", "default"},
                {"httpbin-alt.default.svc.domain.suffix", "default"},
                // istiod: "Stand-ins for the ServiceEntries the ServiceEntry registry synthesizes from XBackends."
                {"secure.example.net", "default"},
                {"cross.example.net", "allowed-1"},
                {"plaintext.example.net", "default"},
                {"tcp.example.net", "default"},
                {"istiod.istio-system.svc.domain.suffix", "istio-system"},
                {"echo.istio-system.svc.domain.suffix", "istio-system"},
                {"httpbin-bad.default.svc.domain.suffix", "default"},
                {"echo-1.default.svc.domain.suffix", "default"},
                {"echo-2.default.svc.domain.suffix", "default"},
                {"echo-port.default.svc.domain.suffix", "default"},
                {"not-found.default.svc.domain.suffix", "default"}}) {
            b.add(service(hostAndNamespace[0], hostAndNamespace[1], PORTS));
        }
        TestGatewayServices built = b.build();
        return built.withPolicyTargets(kubernetesServices(built.all()));
    }

    /**
     * The Kubernetes Service {@code readConfig} creates for each fixture service in the cluster
     * domain: named by the hostname's first label, with the ports of istiod's {@code svcPorts}.
     */
    private static List<PolicyTarget> kubernetesServices(List<ServiceView> services) {
        List<NamedPort> ports = List.of(new NamedPort("http", 80), new NamedPort("tcp", 34000),
                new NamedPort("tcp-other", 34001));
        return services.stream().filter(s -> s.hostname().endsWith(DOMAIN_SUFFIX))
                .map(s -> new PolicyTarget(PolicyTarget.SERVICE, s.namespace(),
                        s.hostname().substring(0, s.hostname().indexOf('.')), List.of(), ports))
                .toList();
    }

    /**
     * The Secrets of the test's {@code objects}, by {@code namespace/name}. {@code malformed} is
     * the Gateway API conformance test's invalid certificate: base64 of "Hello world" as both
     * certificate and key.
     */
    public static Map<String, Map<String, byte[]>> secrets() {
        Map<String, Map<String, byte[]>> secrets = new LinkedHashMap<>();
        secrets.put("istio-system/my-cert-http", Map.of("tls.crt", bytes(RSA_CERT_PEM), "tls.key", bytes(RSA_KEY_PEM),
                "ca.crt", bytes(RSA_CERT_PEM)));
        for (String key : List.of("ns2/ns2-cert", "ns3/ns3-cert", "ns4/ns4-cert", "istio-system/my-cert",
                "istio-system/my-cert-http2", "cert/cert", "bookinfo/bookinfo-secret", "bookinfo/another-secret")) {
            secrets.put(key, Map.of("tls.crt", bytes(RSA_CERT_PEM), "tls.key", bytes(RSA_KEY_PEM)));
        }
        secrets.put("istio-system/malformed", Map.of("tls.crt", bytes("SGVsbG8gd29ybGQK"),
                "tls.key", bytes("SGVsbG8gd29ybGQK")));
        return secrets;
    }

    /** The ConfigMaps of the test's {@code objects}, by {@code namespace/name}. */
    public static Map<String, Map<String, String>> configMaps() {
        Map<String, Map<String, String>> configMaps = new LinkedHashMap<>();
        configMaps.put("istio-system/malformed", Map.of("not-ca.crt", "hello"));
        configMaps.put("istio-system/malformed-trustbundle", Map.of("ca.crt", "hello"));
        configMaps.put("istio-system/my-cert-http", Map.of("ca.crt", RSA_CERT_PEM));
        configMaps.put("default/malformed", Map.of("not-ca.crt", "hello"));
        configMaps.put("default/auth-cert", Map.of("ca.crt", RSA_CERT_PEM));
        return configMaps;
    }

    /** The labels of the Namespace readConfig creates for {@code namespace}. */
    public static Map<String, String> namespaceLabels(String namespace) {
        return Map.of(TEST_NAME_PART_LABEL, namespace.split("-", -1)[0]);
    }

    private static ServiceView service(String hostname, String namespace, List<Integer> ports) {
        return service(hostname, namespace, Map.of(), ports, List.of());
    }

    /**
     * A model service as the test declares it: no Service type and no cluster address (neither is
     * set), one instance per port, endpoint port 8080 for the first port and 0 for the others.
     */
    private static ServiceView service(String hostname, String namespace, Map<String, String> labels, List<Integer> ports,
                                       List<String> externalAddresses) {
        Map<Integer, List<Integer>> endpointPorts = new LinkedHashMap<>();
        for (int i = 0; i < ports.size(); i++) {
            endpointPorts.put(ports.get(i), List.of(i == 0 ? 8080 : 0));
        }
        return new ServiceView(hostname, namespace, labels, "", ports, List.of(), externalAddresses, endpointPorts);
    }

    /**
     * The shadow service of InferencePool {@code pool} in {@code default}: named as istiod's
     * InferencePoolServiceName names it ({@code <pool>-ip-<first 8 hex digits of sha256(pool)>}, the
     * names in the goldens), labelled with its endpoint picker.
     */
    private static ServiceView inferencePoolService(String pool, String extensionService, List<Integer> ports) {
        String hash;
        try {
            hash = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes(pool))).substring(0, 8);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e); // every JDK has SHA-256
        }
        return service(pool + "-ip-" + hash + ".default.svc.domain.suffix", "default", Map.of(
                EXTENSION_SERVICE, extensionService, EXTENSION_PORT, "9002", EXTENSION_FAILURE_MODE, "FailClose"),
                ports, List.of());
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
