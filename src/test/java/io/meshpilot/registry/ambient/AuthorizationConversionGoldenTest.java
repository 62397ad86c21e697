package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import io.meshpilot.config.yaml.ProtoYamlBinder;
import io.meshpilot.config.yaml.SafeYaml;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istiod's own expectations for ztunnel's policy conversion (its TestRBACConvert,
 * pilot/pkg/serviceregistry/ambient/ambientindex_test.go, root namespace istio-system): every
 * {@code *-in.yaml} of its testdata converted, compared with its golden as parsed messages. As
 * there, one AuthorizationPolicy is converted alone; of several PeerAuthentications the root
 * namespace's is the mesh policy, a selector one the workload policy, another the namespace
 * policy, and without a workload policy the namespace policy is converted as one (giving none).
 */
class AuthorizationConversionGoldenTest {
    private static final String ROOT = "istio-system";

    static Stream<String> cases() throws IOException, URISyntaxException {
        try (Stream<Path> files = Files.list(dir())) {
            List<String> names = files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith("-in.yaml"))
                    .map(n -> n.substring(0, n.length() - "-in.yaml".length())).sorted().toList();
            return names.stream();
        }
    }

    @Test
    void everyIstiodCaseIsRun() throws Exception {
        assertEquals(22, cases().count(), "the cases of istiod's testdata at 86c9f01");
    }

    @ParameterizedTest
    @MethodSource("cases")
    void convertsAsIstiod(String name) throws Exception {
        String input = Files.readString(dir().resolve(name + "-in.yaml"));
        ConfigParser.Result parsed = new ConfigParser(Schemas.PILOT).parse(name + "-in.yaml", input);
        assertTrue(parsed.errors().isEmpty(), parsed.errors().toString());
        List<Config> configs = parsed.configs().stream().map(c -> withoutDefaultNamespace(c, input)).toList();
        Authorization actual = switch (configs.getFirst().gvk().kind()) {
            case "AuthorizationPolicy" -> AuthorizationPolicyConversion.convert(configs.getFirst(), ROOT, false)
                    .authorization();
            case "PeerAuthentication" -> convertPeerAuthentications(configs);
            default -> throw new AssertionError("unexpected kind in " + name);
        };
        assertEquals(golden(name), actual, name);
    }

    /** istiod's test sorts the documents into mesh, namespace and workload policies the same way. */
    private static Authorization convertPeerAuthentications(List<Config> configs) {
        if (configs.size() == 1) {
            return PeerAuthenticationConversion.convert(ROOT, configs.getFirst(), null, null);
        }
        Config mesh = null;
        Config namespace = null;
        Config workload = null;
        for (Config c : configs) {
            boolean selector = ((PeerAuthentication) c.spec()).hasSelector();
            if (c.namespace().equals(ROOT)) {
                mesh = mesh == null ? c : mesh;
            } else if (selector) {
                workload = c;
            } else if (namespace == null) {
                namespace = c;
            }
        }
        if (workload == null) {
            return PeerAuthenticationConversion.convert(ROOT, namespace, null, mesh);
        }
        return PeerAuthenticationConversion.convert(ROOT, workload, namespace, mesh);
    }

    /** istiod's inputs without metadata.namespace convert with an empty one (our parser defaults it). */
    private static Config withoutDefaultNamespace(Config c, String input) {
        if (input.lines().anyMatch(l -> l.strip().startsWith("namespace:"))) {
            return c;
        }
        return new Config(c.gvk(), c.name(), "", c.labels(), c.annotations(), c.resourceVersion(), c.generation(),
                c.creationTimestamp(), c.spec(), c.status());
    }

    /** The golden as a message; null for an empty golden (no policy). */
    private static Authorization golden(String name) throws Exception {
        String text = Files.readString(dir().resolve(name + ".yaml"), StandardCharsets.UTF_8);
        if (text.isBlank()) {
            return null;
        }
        Authorization.Builder b = Authorization.newBuilder();
        new ProtoYamlBinder().bind(name + ".yaml", SafeYaml.documents(name + ".yaml", text).getFirst(), b);
        return b.build();
    }

    private static Path dir() throws URISyntaxException {
        return Path.of(AuthorizationConversionGoldenTest.class.getResource("/istio-ambient-authorization").toURI());
    }
}
