package io.meshpilot.config.yaml;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.gson.Gson;
import com.google.protobuf.Duration;
import com.google.protobuf.Message;
import com.google.protobuf.Struct;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.config.GroupVersionKind;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.schema.Schemas;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.nodes.MappingNode;
import org.yaml.snakeyaml.nodes.Node;
import org.yaml.snakeyaml.nodes.NodeTuple;
import org.yaml.snakeyaml.nodes.ScalarNode;

/**
 * The binder builds messages straight from YAML nodes. Its oracle is protobuf's own JSON
 * reader: every spec of the bookinfo samples and of the test meshes, turned into JSON by a
 * plain YAML load, must give the same message through {@link JsonFormat}.
 */
class ProtoYamlBinderTest {
    private final ProtoYamlBinder binder = new ProtoYamlBinder();

    @Test
    void everySampleSpecBindsAsProtobufJsonReadsIt() throws Exception {
        List<Path> files = new ArrayList<>();
        for (String dir : List.of("src/test/resources/golden/samples", "src/test/resources/meshes")) {
            try (Stream<Path> s = Files.list(Path.of(dir))) {
                s.filter(p -> p.toString().endsWith(".yaml")).sorted().forEach(files::add);
            }
        }
        int specs = 0;
        for (Path file : files) {
            String text = Files.readString(file);
            List<Node> docs = SafeYaml.documents(file.toString(), text);
            List<Object> plain = new ArrayList<>();
            new Yaml(new SafeConstructor(new LoaderOptions())).loadAll(text).forEach(d -> {
                if (d != null) {
                    plain.add(d);
                }
            });
            assertEquals(plain.size(), docs.size(), file.toString());
            for (int i = 0; i < docs.size(); i++) {
                Map<?, ?> doc = (Map<?, ?>) plain.get(i);
                Schema schema = Schemas.PILOT.forGvk(GroupVersionKind.of((String) doc.get("apiVersion"),
                        (String) doc.get("kind"))).orElse(null);
                if (schema == null || doc.get("spec") == null) {
                    continue;
                }
                Message.Builder expected = schema.defaultSpec().newBuilderForType();
                JsonFormat.parser().merge(new Gson().toJson(doc.get("spec")), expected);
                Message.Builder actual = schema.defaultSpec().newBuilderForType();
                binder.bind(file.toString(), child(docs.get(i), "spec"), actual);
                assertEquals(expected.build(), actual.build(), file + " document " + i);
                specs++;
            }
        }
        assertTrue(specs > 40, "specs compared: " + specs);
    }

    @Test
    void scalarsEnumsWellKnownTypesAndMapsMatchProtobufJson() throws Exception {
        String yaml = """
                host: reviews.default.svc.cluster.local
                subsets:
                - name: v1
                  labels: {version: v1, "app.kubernetes.io/name": reviews}
                  trafficPolicy:
                    loadBalancer: {simple: ROUND_ROBIN, warmupDurationSecs: 10.5s}
                trafficPolicy:
                  connectionPool:
                    tcp: {maxConnections: 100, connectTimeout: 0.25s, tcpKeepalive: {probes: 3, time: 7200s}}
                    http: {http1MaxPendingRequests: 1024, maxRetries: 3, idleTimeout: 15s, h2UpgradePolicy: 1}
                  outlierDetection: {consecutive5xxErrors: 7, interval: 5s, maxEjectionPercent: 100,
                    splitExternalLocalOriginErrors: true}
                  tls: {mode: ISTIO_MUTUAL, sni: a.example, subjectAltNames: [x, "y"]}
                  portLevelSettings:
                  - port: {number: 9080}
                    loadBalancer: {consistentHash: {httpHeaderName: x-user, minimumRingSize: 1024}}
                exportTo: [".", "*"]
                """;
        assertSameAsJsonFormat(DestinationRule.newBuilder(), yaml);
        assertSameAsJsonFormat(WorkloadEntry.newBuilder(), """
                address: 10.0.0.1
                ports: {http: 19000, grpc: 4294967295}
                labels: {app: svc-0}
                weight: 0
                locality: us-east1/zone1
                """);
    }

    @Test
    void goDurationsAreAcceptedWhereProtobufJsonTakesOnlySeconds() throws Exception {
        VirtualService.Builder b = VirtualService.newBuilder();
        binder.bind("t", node("http: [{timeout: 1m30s, retries: {attempts: 2, perTryTimeout: 250ms}}]"), b);
        assertEquals(Duration.newBuilder().setSeconds(90).build(), b.getHttp(0).getTimeout());
        assertEquals(Duration.newBuilder().setNanos(250_000_000).build(), b.getHttp(0).getRetries().getPerTryTimeout());
    }

    @Test
    void eachProblemIsNamedWithItsPathAndLine() {
        YamlBindingException e = assertThrows(YamlBindingException.class, () -> binder.bind("t", node("""
                address: 10.0.0.1
                ports: {http: 4294967296, grpc: -1}
                weight: lots
                labels: {app: null}
                """), WorkloadEntry.newBuilder()));
        List<String> problems = e.errors().stream().map(f -> f.path() + "@" + f.line() + ": " + f.reason()).toList();
        assertEquals(4, problems.size(), problems.toString());
        assertTrue(problems.get(0).startsWith("ports[http]@2: number 4294967296 is out of range"), problems.toString());
        assertTrue(problems.get(1).startsWith("ports[grpc]@2: number -1 is out of range"), problems.toString());
        assertTrue(problems.get(2).startsWith("weight@3: expected a whole number"), problems.toString());
        assertEquals("labels[app]@4: a map value cannot be null", problems.get(3));

        YamlBindingException list = assertThrows(YamlBindingException.class, () -> binder.bind("t",
                node("exportTo: [a, ~]"), VirtualService.newBuilder()));
        assertEquals("exportTo[1]", list.first().path());
        assertEquals("a list item cannot be null", list.first().reason());

        YamlBindingException oneof = assertThrows(YamlBindingException.class, () -> binder.bind("t",
                node("loadBalancer: {simple: RANDOM, consistentHash: {httpHeaderName: x}}"),
                TrafficPolicy.newBuilder()));
        assertTrue(oneof.first().reason().contains("only one of"), oneof.first().reason());
    }

    @Test
    void aFieldNamedTwiceUnderItsTwoNamesIsRejected() {
        YamlBindingException e = assertThrows(YamlBindingException.class, () -> binder.bind("t",
                node("exportTo: [a]\nexport_to: [b]"), VirtualService.newBuilder()));
        assertEquals("export_to", e.first().path());
        assertEquals("\"exportTo\" and \"export_to\" are the same field", e.first().reason());
    }

    @Test
    void integerMapKeysAreDecimalTextAsInProtobufJson() throws Exception {
        PeerAuthentication.Builder b =
                PeerAuthentication.newBuilder();
        binder.bind("t", node("portLevelMtls: {\"010\": {mode: STRICT}, 8080: {mode: DISABLE}}"), b);
        assertEquals(Set.of(10, 8080), b.getPortLevelMtlsMap().keySet());
        YamlBindingException e = assertThrows(YamlBindingException.class, () -> binder.bind("t",
                node("portLevelMtls: {\"0x50\": {mode: STRICT}}"),
                PeerAuthentication.newBuilder()));
        assertEquals("map key must be a whole number, got \"0x50\"", e.first().reason());
    }

    @Test
    void structsKeepNumbersAsDoublesAndNullsAsNull() throws Exception {
        Struct s = ProtoYamlBinder.toStruct(node("{a: 1, b: [true, ~, x], c: {d: 2.5}}"));
        Struct.Builder expected = Struct.newBuilder();
        JsonFormat.parser().merge("{\"a\": 1, \"b\": [true, null, \"x\"], \"c\": {\"d\": 2.5}}", expected);
        assertEquals(expected.build(), s);
        assertThrows(YamlBindingException.class, () -> ProtoYamlBinder.toStruct(node("[1]")));
    }

    private void assertSameAsJsonFormat(Message.Builder type, String yaml) throws Exception {
        Message.Builder expected = type.clone();
        Object plain = new Yaml(new SafeConstructor(new LoaderOptions())).load(yaml);
        JsonFormat.parser().merge(new Gson().toJson(plain), expected);
        Message.Builder actual = type.clone();
        binder.bind("t", node(yaml), actual);
        assertEquals(expected.build(), actual.build());
    }

    private static Node node(String yaml) throws YamlBindingException {
        return SafeYaml.documents("t", yaml).get(0);
    }

    private static Node child(Node doc, String key) {
        for (NodeTuple t : ((MappingNode) doc).getValue()) {
            if (t.getKeyNode() instanceof ScalarNode k && k.getValue().equals(key)) {
                return t.getValueNode();
            }
        }
        throw new AssertionError("no " + key);
    }
}
