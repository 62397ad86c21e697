package io.meshpilot.config.kube.ingress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kubernetes.client.openapi.models.V1Ingress;
import io.kubernetes.client.util.Yaml;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * istiod's own expectations for the Ingress conversion (its TestGoldenConversion: mode DEFAULT,
 * domain suffix {@code mydomain}, no Services): each input's Gateways and VirtualServices,
 * names, namespaces, annotations and specs, equal the golden's, compared as parsed objects.
 */
class IngressConversionGoldenTest {
    @ParameterizedTest
    @ValueSource(strings = {"simple", "tls", "overlay", "tls-no-secret"})
    void convertsAsIstiod(String name) throws IOException {
        List<V1Ingress> ingresses = new ArrayList<>();
        for (Object o : Yaml.loadAll(resource(name + ".yaml"))) {
            ingresses.add((V1Ingress) o);
        }
        MeshConfig mesh = MeshConfig.newBuilder().setIngressControllerMode(MeshConfig.IngressControllerMode.DEFAULT)
                .build();
        IngressConversion.Result result = new IngressConversion("istio-system", "mydomain")
                .convert(ingresses, mesh, (namespace, service) -> Optional.empty());
        List<Config> actual = new ArrayList<>(result.virtualServices());
        actual.addAll(result.gateways());

        ConfigParser.Result golden = new ConfigParser(Schemas.PILOT).parse(name + ".yaml.golden",
                resource(name + ".yaml.golden"));
        assertTrue(golden.errors().isEmpty(), golden.errors().toString());
        assertEquals(comparable(golden.configs()), comparable(actual));
    }

    /** What the goldens fix: kind, namespace, name, annotations and spec, in name order. */
    private static List<String> comparable(List<Config> configs) {
        return configs.stream().sorted(Comparator.comparing(Config::name).thenComparing(c -> c.gvk().kind()))
                .map(c -> c.gvk().kind() + " " + c.namespace() + "/" + c.name() + " " + Map.copyOf(c.annotations())
                        + "\n" + c.spec())
                .toList();
    }

    private String resource(String name) throws IOException {
        try (InputStream in = getClass().getResourceAsStream("/ingress/" + name)) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
    }
}
