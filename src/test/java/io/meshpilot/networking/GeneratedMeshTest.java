package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.model.Service;
import org.junit.jupiter.api.Test;

/** The generated mesh is what its documentation says, so scale tests can count on it. */
class GeneratedMeshTest {
    @Test
    void servicesEndpointsAndRules() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(100)) {
            var push = mesh.push();
            assertEquals(100, push.services().size());
            assertEquals(20, push.virtualServiceCount());
            for (int i = 0; i < 100; i++) {
                Service s = push.service(GeneratedMesh.hostname(i)).orElseThrow();
                assertEquals(GeneratedMesh.ports(i), s.ports().size(), s.hostname());
                // one endpoint per workload and service port
                assertEquals(2 * s.ports().size(), push.endpoints().shards(s.hostname(), s.namespace()).all().size(),
                        s.hostname());
                var proxy = GeneratedMesh.sidecar(i, 1);
                assertEquals(GeneratedMesh.hasRules(i),
                        push.destinationRule(s.hostname(), push.scope(proxy)).isPresent(), s.hostname());
            }
            assertEquals(GeneratedMesh.yaml(100), GeneratedMesh.yaml(100));
        }
    }
}
