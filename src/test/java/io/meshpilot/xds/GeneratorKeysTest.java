package io.meshpilot.xds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.mesh.MeshConfigLoader;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.networking.ClusterNames;
import io.meshpilot.networking.HboneEndpoints;
import io.meshpilot.networking.GeneratedMesh;
import io.meshpilot.networking.LocalityLoadBalancer;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The keys each generator shares its work by, on a generated mesh's real PushContext: proxies
 * that must get the same resources share a key, and a key changes with each input the
 * resources depend on. Sharing too much would give a proxy another proxy's config; sharing too
 * little only costs time, so both directions are pinned.
 */
class GeneratorKeysTest {
    private static final Proxy V1 = GeneratedMesh.sidecar(0, 1);
    private static final Proxy V2 = GeneratedMesh.sidecar(0, 2);
    /** Service 1 has a TCP port besides HTTP: its sidecar's inbound clusters differ from service 0's. */
    private static final Proxy OTHER_PORTS = GeneratedMesh.sidecar(1, 1);

    @Test
    void cdsSharesAWildcardListOnlyAmongSidecarsWithTheSameInboundPorts() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10)) {
            PushContext push = mesh.push();
            CdsGenerator cds = new CdsGenerator(new XdsCache(true));
            assertEquals(cds.responseScope(V1, push, true), cds.responseScope(V2, push, true));
            assertNotEquals(cds.responseScope(V1, push, true), cds.responseScope(OTHER_PORTS, push, true),
                    "a sidecar's wildcard CDS holds its own inbound clusters");
            assertEquals(push.scope(V1).key(), cds.responseScope(V1, push, false),
                    "named clusters depend on the scope only");
        }
    }

    @Test
    void edsKeysASubsetByTheDestinationRuleThatDefinesIt() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10)) {
            PushContext push = mesh.push();
            var scope = push.scope(V1);
            String host = GeneratedMesh.hostname(0); // has a DestinationRule with subsets v1 and v2
            EdsGenerator.RuleKey rule = EdsGenerator.ruleKey(ClusterNames.parseOutbound(
                    ClusterNames.outbound(GeneratedMesh.HTTP_PORT, "v1", host)), push, scope,
                    LocalityLoadBalancer.ProxyLocality.of(V1));
            assertTrue(rule.rule().startsWith("DestinationRule/"), rule.toString());
            assertEquals(new LocalityLoadBalancer.CacheKey(true, V1.locality(), List.of()), rule.locality());
            // the rule's outlier detection turns locality failover on: the proxy's locality joins the key
            assertEquals(rule, EdsGenerator.ruleKey(ClusterNames.parseOutbound(
                    ClusterNames.outbound(GeneratedMesh.HTTP_PORT, "", host)), push, scope,
                    LocalityLoadBalancer.ProxyLocality.of(V1)));
            assertEquals(new EdsGenerator.ResponseScope(scope.key(), new EdsGenerator.NetworkKey(null, Set.of(), null),
                    V1.locality(), null, HboneEndpoints.Sender.NONE),
                    new EdsGenerator(new XdsCache(true)).responseScope(V1, push, false));
        }
    }

    @Test
    void sidecarRoutesAndListenersAreKeyedByLabelsOnlyWhenAVirtualServiceMatchesSourceLabels() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10)) {
            PushContext push = mesh.push();
            assertFalse(push.routesDependOnProxyLabels());
            assertEquals(EnvoyRdsGenerator.routesKey(V1, push), EnvoyRdsGenerator.routesKey(V2, push));
            assertEquals(EnvoyLdsGenerator.outboundKey(V1, push), EnvoyLdsGenerator.outboundKey(V2, push));

            mesh.fixture().apply("""
                    apiVersion: networking.istio.io/v1
                    kind: VirtualService
                    metadata: {name: canary, namespace: %s}
                    spec:
                      hosts: [%s]
                      http:
                      - match: [{sourceLabels: {version: v2}}]
                        route: [{destination: {host: %s, subset: v2}}]
                      - route: [{destination: {host: %s}}]
                    """.formatted(GeneratedMesh.namespace(3), GeneratedMesh.hostname(3), GeneratedMesh.hostname(3),
                    GeneratedMesh.hostname(3)));
            PushContext next = PushContext.build(mesh.fixture().registry, mesh.fixture().store,
                    mesh.fixture().updates.index, new MeshConfigLoader().defaults(), "cluster.local",
                    push.version() + 1);
            assertTrue(next.routesDependOnProxyLabels());
            assertNotEquals(EnvoyRdsGenerator.routesKey(V1, next), EnvoyRdsGenerator.routesKey(V2, next));
            assertNotEquals(EnvoyLdsGenerator.outboundKey(V1, next), EnvoyLdsGenerator.outboundKey(V2, next));
        }
    }

    /** Two servers in one JVM: what one server's generators cache is not seen by the other's. */
    @Test
    void generatorsOfTwoServersShareNoCache() throws Exception {
        try (GeneratedMesh mesh = GeneratedMesh.of(10)) {
            PushContext push = mesh.push();
            XdsCache first = new XdsCache(true);
            XdsCache second = new XdsCache(true);
            Generators a = Generators.standalone(first);
            Generators b = Generators.standalone(second);
            Set<String> names = SubscribedNames.of(Set.of(ClusterNames.outbound(GeneratedMesh.HTTP_PORT, "",
                    GeneratedMesh.hostname(0))));
            assertEquals(1, a.forType(TypeUrls.ENDPOINT, V1).generate(V1, push, names, false).size());
            assertTrue(first.size() > 0, "the first server's generator cached the assignment");
            assertEquals(0, second.size(), "the second server's cache is its own");
            b.forType(TypeUrls.ENDPOINT, V1).generate(V1, push, names, false);
            assertEquals(first.size(), second.size());
        }
    }
}
