package io.meshpilot.config.kube.gateway;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link ReferenceGrants} against istiod's rules (pilot/pkg/config/kube/gatewaycommon/references.go,
 * ReferenceGrantsCollection, BackendAllowed and SecretAllowed): a grant lives in the namespace of
 * what may be referred to, names the kinds and namespaces that may refer, and the one name (or,
 * without a name, every object) of the kind they may refer to.
 */
class ReferenceGrantsTest {
    private static final String SECRET_GRANT = grant("certs", List.of(from("Gateway", "istio-system")),
            List.of("{group: '', kind: Secret, name: wildcard-cert}"));

    @Test
    void aReferenceWithinOneNamespaceNeedsNoGrant() {
        assertTrue(ReferenceGrants.NONE.allowed("HTTPRoute", "default", "", "Service", "default", "httpbin"));
    }

    @Test
    void aCrossNamespaceReferenceNeedsAGrantNamingItsFromKindNamespaceAndName() {
        ReferenceGrants grants = grants(SECRET_GRANT);

        assertTrue(grants.allowed("Gateway", "istio-system", "", "Secret", "certs", "wildcard-cert"));
        assertFalse(ReferenceGrants.NONE.allowed("Gateway", "istio-system", "", "Secret", "certs", "wildcard-cert"));
        assertFalse(grants.allowed("Gateway", "istio-system", "", "Secret", "certs", "other-cert"), "another name");
        assertFalse(grants.allowed("Gateway", "default", "", "Secret", "certs", "wildcard-cert"), "another namespace");
        assertFalse(grants.allowed("HTTPRoute", "istio-system", "", "Secret", "certs", "wildcard-cert"), "another kind");
        assertFalse(grants.allowed("Gateway", "istio-system", "", "ConfigMap", "certs", "wildcard-cert"),
                "another target kind");
        assertFalse(grants.allowed("Gateway", "istio-system", "", "Secret", "other", "wildcard-cert"),
                "a grant allows references into its own namespace only");
    }

    @Test
    void aGrantWithoutANameAllowsEveryObjectOfTheKind() {
        ReferenceGrants grants = grants(grant("backends", List.of(from("HTTPRoute", "default"),
                from("GRPCRoute", "default")), List.of("{group: '', kind: Service}")));

        assertTrue(grants.allowed("HTTPRoute", "default", "", "Service", "backends", "a"));
        assertTrue(grants.allowed("GRPCRoute", "default", "", "Service", "backends", "b"));
        assertFalse(grants.allowed("TCPRoute", "default", "", "Service", "backends", "a"));
    }

    /**
     * istiod keeps a named grant's name as written and compares it with the referenced name, so a grant
     * naming {@code "*"} (a valid ObjectName: no pattern restricts it) allows an object named {@code *}
     * only, never every object.
     */
    @Test
    void aGrantNamingAnAsteriskAllowsOnlyThatName() {
        ReferenceGrants grants = grants(SECRET_GRANT.replace("name: wildcard-cert", "name: '*'"));

        assertFalse(grants.allowed("Gateway", "istio-system", "", "Secret", "certs", "wildcard-cert"));
        assertTrue(grants.allowed("Gateway", "istio-system", "", "Secret", "certs", "*"));
    }

    @Test
    void grantsToTheInferenceAndExperimentalBackendKindsAreHonoured() {
        ReferenceGrants grants = grants(grant("models", List.of(from("HTTPRoute", "default")), List.of(
                "{group: inference.networking.k8s.io, kind: InferencePool}",
                "{group: gateway.networking.x-k8s.io, kind: XBackend}")));

        assertTrue(grants.allowed("HTTPRoute", "default", "inference.networking.k8s.io", "InferencePool", "models", "p"));
        assertTrue(grants.allowed("HTTPRoute", "default", "gateway.networking.x-k8s.io", "XBackend", "models", "x"));
    }

    /** istiod: "Not supported type. Not an error; may be for another controller". */
    @Test
    void entriesOfKindsIstiodDoesNotSupportAreSkippedAndTheRestStillApply() {
        String mixed = grant("backends", List.of("{group: example.com, kind: HTTPRoute, namespace: default}",
                        from("UDPRoute", "default"), from("TLSRoute", "default"), "not-an-object"),
                List.of("{group: apps, kind: Deployment}", "{group: '', kind: Service, name: tls-backend}"));
        String malformed = """
                apiVersion: gateway.networking.k8s.io/v1beta1
                kind: ReferenceGrant
                metadata: {name: malformed, namespace: backends}
                spec:
                  from: {group: gateway.networking.k8s.io, kind: HTTPRoute, namespace: default}
                  to: all
                """;
        String notAGrant = grant("backends", List.of(from("HTTPRoute", "default")), List.of("{group: '', kind: Service}"))
                .replace("kind: ReferenceGrant", "kind: HTTPRoute");
        ReferenceGrants grants = grants(mixed + "---\n" + malformed + "---\n" + notAGrant);

        assertTrue(grants.allowed("TLSRoute", "default", "", "Service", "backends", "tls-backend"));
        assertFalse(grants.allowed("HTTPRoute", "default", "", "Service", "backends", "tls-backend"),
                "from another group, from a malformed grant or from an object that is no grant");
        assertFalse(grants.allowed("TLSRoute", "default", "apps", "Deployment", "backends", "tls-backend"));
    }

    /** A ReferenceGrant in {@code namespace}, its {@code from} and {@code to} entries as YAML flow mappings. */
    private static String grant(String namespace, List<String> from, List<String> to) {
        return """
                apiVersion: gateway.networking.k8s.io/v1beta1
                kind: ReferenceGrant
                metadata: {name: grant, namespace: %s}
                spec:
                  from: [%s]
                  to: [%s]
                """.formatted(namespace, String.join(", ", from), String.join(", ", to));
    }

    private static String from(String kind, String namespace) {
        return "{group: gateway.networking.k8s.io, kind: " + kind + ", namespace: " + namespace + "}";
    }

    private static ReferenceGrants grants(String yaml) {
        List<GatewayApiObject> objects = IstioGatewayApiGoldens.jsonDocuments(yaml).stream()
                .map(GatewayApiObject::fromJson).toList();
        return ReferenceGrants.of(objects);
    }
}
