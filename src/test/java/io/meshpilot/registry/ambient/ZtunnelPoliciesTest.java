package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.meshpilot.api.workload.security.Action;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.api.workload.security.Scope;
import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.schema.Schemas;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Which policies reach ztunnel and what is reported about the others, with istiod's messages
 * (convertAuthorizationPolicy and TestConvertAuthorizationPolicyStatus,
 * pilot/pkg/serviceregistry/ambient/authorization.go and authorization_test.go).
 */
class ZtunnelPoliciesTest {
    private static final String POLICIES = """
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: mesh-wide, namespace: istio-system}
            spec: {action: DENY, rules: [{from: [{source: {namespaces: [evil]}}]}]}
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: allow-get, namespace: ns1}
            spec:
              rules:
              - to: [{operation: {methods: [GET], paths: [/api]}}]
              - from: [{source: {principals: [cluster.local/ns/ns1/sa/client]}}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: deny-header, namespace: ns1}
            spec:
              action: DENY
              rules: [{when: [{key: "request.headers[x-user]", values: [bad]}]}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: deny-mixed, namespace: ns1}
            spec:
              action: DENY
              rules: [{from: [{source: {namespaces: [ns2], requestPrincipals: ["*"]}}]}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: audit, namespace: ns1}
            spec: {action: AUDIT, rules: [{}]}
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: waypoint-bound, namespace: ns1}
            spec:
              targetRefs: [{kind: Service, group: "", name: reviews}]
              rules: [{to: [{operation: {methods: [GET]}}]}]
            ---
            apiVersion: security.istio.io/v1
            kind: AuthorizationPolicy
            metadata: {name: trial, namespace: ns1, annotations: {istio.io/dry-run: "true"}}
            spec: {selector: {matchLabels: {app: a}}, rules: [{}]}
            ---
            """;

    @Test
    void l7RulesAreLeftOutAndReportedAsIstiodReportsThem() {
        ZtunnelPolicies p = policies(POLICIES, false);
        assertEquals(List.of("istio-system/mesh-wide", "ns1/allow-get", "ns1/deny-header", "ns1/deny-mixed"),
                List.copyOf(p.authorizations().keySet()), "sent: not AUDIT, not targetRefs, not dry run (off)");

        Authorization mesh = p.authorizations().get("istio-system/mesh-wide");
        assertEquals(Scope.GLOBAL, mesh.getScope());
        assertEquals(Action.DENY, mesh.getAction());

        // ALLOW: the HTTP rule is dropped (it could never match), the principal rule stays
        Authorization allow = p.authorizations().get("ns1/allow-get");
        assertEquals(Scope.NAMESPACE, allow.getScope());
        assertEquals(1, allow.getGroupsCount());
        assertEquals("cluster.local/ns/ns1/sa/client",
                allow.getGroups(0).getRules(0).getMatches(0).getPrincipals(0).getExact());

        assertEquals(Map.of(
                "ns1/allow-get", "ztunnel does not support HTTP attributes (found: methods, paths). In ambient mode you "
                        + "must use a waypoint proxy to enforce HTTP rules. Within an ALLOW policy, rules matching HTTP "
                        + "attributes are omitted. This will be more restrictive than requested.",
                "ns1/deny-header", "ztunnel does not support HTTP attributes (found: request.headers[x-user]). In "
                        + "ambient mode you must use a waypoint proxy to enforce HTTP rules. After omitting unsupported "
                        + "HTTP attributes, this DENY policy has no enforceable rules at ztunnel and will have no "
                        + "effect. Deploy a waypoint proxy and use a targetRef to enforce this policy.",
                "ns1/deny-mixed", "ztunnel does not support HTTP attributes (found: requestPrincipals). In ambient "
                        + "mode you must use a waypoint proxy to enforce HTTP rules. DENY policy with HTTP attributes "
                        + "is enforced without the HTTP rules. This will be more restrictive than requested.",
                "ns1/audit", "ztunnel does not support the AUDIT action",
                "ns1/trial", "found policy \"ns1/trial\" using dry-run annotation, but support for ambient dry-run "
                        + "authorizationPolicies isn't enabled"), p.unapplied());
        assertFalse(p.authorizations().keySet().stream().anyMatch(k -> k.startsWith("istio-system/istio_")),
                "no PeerAuthentication: no static STRICT policy");
    }

    @Test
    void dryRunPoliciesAreSentMarkedWhenEnabled() {
        ZtunnelPolicies p = policies(POLICIES, true);
        Authorization trial = p.authorizations().get("ns1/trial");
        assertTrue(trial.getDryRun());
        assertEquals(Scope.WORKLOAD_SELECTOR, trial.getScope());
        assertFalse(p.unapplied().containsKey("ns1/trial"));
        assertEquals(List.of("ns1/trial"), WorkloadPolicySelection.forWorkload(p, "ns1", Map.of("app", "a")));
    }

    @Test
    void anyPeerAuthenticationBringsTheStaticStrictPolicy() {
        ZtunnelPolicies p = policies("""
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: default, namespace: istio-system}
                spec: {mtls: {mode: PERMISSIVE}}
                """, false);
        assertEquals(PeerAuthenticationConversion.staticStrict("istio-system"),
                p.authorizations().get("istio-system/istio_converted_static_strict"));
        assertEquals(1, p.authorizations().size());
    }

    static ZtunnelPolicies policies(String yaml, boolean dryRun) {
        ConfigParser.Result r = new ConfigParser(Schemas.PILOT).parse("policies.yaml", yaml);
        assertTrue(r.errors().isEmpty(), r.errors().toString());
        List<Config> aps = r.configs().stream().filter(c -> c.gvk().kind().equals("AuthorizationPolicy")).toList();
        List<Config> pas = r.configs().stream().filter(c -> c.gvk().kind().equals("PeerAuthentication")).toList();
        return ZtunnelPolicies.convert("istio-system", aps, pas, dryRun);
    }
}
