package io.meshpilot.registry.ambient;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The policy names a workload carries, step by step as istiod's TestAmbientIndex_Policy
 * (pilot/pkg/serviceregistry/ambient/ambientindex_test.go) changes the policies: its pods are in
 * ns1 with {@code app: a} (pod1) and {@code app: not-a} (pod2 before it is relabelled), the
 * root namespace is istio-system, and each row's expectations are the lists that test asserts.
 */
class WorkloadPolicySelectionTest {
    private static final String STATIC = "istio-system/istio_converted_static_strict";
    private static final String CONVERTED_SELECTOR = "ns1/converted_peer_authentication_selector";
    private static final Map<String, String> APP_A = Map.of("app", "a");
    private static final Map<String, String> NOT_A = Map.of("app", "not-a");

    record Step(String name, String policies, List<String> forA, List<String> forNotA) {
    }

    static String pa(String name, String namespace, String selector, String mtls, String ports) {
        return """
                apiVersion: security.istio.io/v1
                kind: PeerAuthentication
                metadata: {name: %s, namespace: %s}
                spec: {%s%s%s}
                ---
                """.formatted(name, namespace, selector == null ? "" : "selector: {matchLabels: {app: " + selector + "}}, ",
                mtls == null ? "" : "mtls: {mode: " + mtls + "}, ", ports == null ? "" : "portLevelMtls: {" + ports + "}");
    }

    static String ap(String name, String namespace, String selector) {
        return """
                apiVersion: security.istio.io/v1
                kind: AuthorizationPolicy
                metadata: {name: %s, namespace: %s}
                spec: {%s}
                ---
                """.formatted(name, namespace, selector == null ? "" : "selector: {matchLabels: {app: " + selector + "}}");
    }

    @Test
    void policiesNamedByWorkloadsFollowIstiodsPolicyTest() {
        String globalPermissive = pa("global", "istio-system", null, "PERMISSIVE", null);
        String nsStrict = pa("namespace", "ns1", null, "STRICT", null);
        String nsPermissive = pa("namespace", "ns1", null, "PERMISSIVE", null);
        String apBase = ap("global", "istio-system", null) + ap("namespace", "ns1", null) + ap("selector", "ns1", "a");
        List<Step> steps = List.of(
                new Step("namespace STRICT: the static policy", globalPermissive + nsStrict,
                        List.of(STATIC), List.of(STATIC)),
                new Step("a STRICT workload policy changes nothing",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", "STRICT", null),
                        List.of(STATIC), List.of(STATIC)),
                new Step("workload PERMISSIVE: nothing",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", "PERMISSIVE", null),
                        List.of(), List.of(STATIC)),
                new Step("workload PERMISSIVE with a STRICT port: its converted policy",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", "PERMISSIVE", "9090: {mode: STRICT}"),
                        List.of(CONVERTED_SELECTOR), List.of(STATIC)),
                new Step("a selector PeerAuthentication in the root namespace applies to nobody",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", "PERMISSIVE", "9090: {mode: STRICT}")
                                + pa("global-selector", "istio-system", "a", "STRICT", null),
                        List.of(CONVERTED_SELECTOR), List.of(STATIC)),
                new Step("workload and port PERMISSIVE: nothing",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", "PERMISSIVE", "9090: {mode: PERMISSIVE}"),
                        List.of(), List.of(STATIC)),
                new Step("namespace PERMISSIVE, workload STRICT: the static policy",
                        globalPermissive + nsPermissive + pa("selector", "ns1", "a", "STRICT", null),
                        List.of(STATIC), List.of()),
                new Step("workload STRICT with a PERMISSIVE port: its converted policy",
                        globalPermissive + nsPermissive + pa("selector", "ns1", "a", "STRICT", "9090: {mode: PERMISSIVE}"),
                        List.of(CONVERTED_SELECTOR), List.of()),
                new Step("workload UNSET with a STRICT port under PERMISSIVE: its converted policy",
                        globalPermissive + nsPermissive + pa("selector", "ns1", "a", null, "9090: {mode: STRICT}"),
                        List.of(CONVERTED_SELECTOR), List.of()),
                new Step("workload UNSET with a STRICT port under STRICT: the static policy",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", null, "9090: {mode: STRICT}"),
                        List.of(STATIC), List.of(STATIC)),
                new Step("workload UNSET with a PERMISSIVE port under STRICT: the converted policy carries STRICT",
                        globalPermissive + nsStrict + pa("selector", "ns1", "a", null, "9090: {mode: PERMISSIVE}"),
                        List.of(CONVERTED_SELECTOR), List.of(STATIC)),
                new Step("AuthorizationPolicies: only a matching selector policy is named", apBase,
                        List.of("ns1/selector"), List.of()),
                new Step("a root-namespace selector policy applies in every namespace",
                        apBase + ap("global-selector", "istio-system", "a"),
                        List.of("istio-system/global-selector", "ns1/selector"), List.of()),
                new Step("a selector that no longer selects", apBase + ap("global-selector", "istio-system", "not-a"),
                        List.of("ns1/selector"), List.of("istio-system/global-selector")),
                new Step("mesh STRICT: the static policy after the selector policies",
                        apBase + pa("strict", "istio-system", null, "STRICT", null),
                        List.of("ns1/selector", STATIC), List.of(STATIC)),
                new Step("workload STRICT with a PERMISSIVE port under mesh STRICT",
                        apBase + pa("strict", "istio-system", null, "STRICT", null)
                                + pa("selector-strict", "ns1", "a", "STRICT", "9090: {mode: PERMISSIVE}"),
                        List.of("ns1/selector", "ns1/converted_peer_authentication_selector-strict"), List.of(STATIC)),
                new Step("another namespace's selector policy is not named", ap("other", "ns2", "a"),
                        List.of(), List.of()));
        List<String> wrong = new ArrayList<>();
        for (Step s : steps) {
            ZtunnelPolicies policies = ZtunnelPoliciesTest.policies(s.policies(), false);
            List<String> a = WorkloadPolicySelection.forWorkload(policies, "ns1", APP_A);
            List<String> notA = WorkloadPolicySelection.forWorkload(policies, "ns1", NOT_A);
            if (!a.equals(s.forA()) || !notA.equals(s.forNotA())) {
                wrong.add(s.name() + ": app=a " + a + " (want " + s.forA() + "), app=not-a " + notA + " (want "
                        + s.forNotA() + ")");
            }
        }
        assertEquals(List.of(), wrong);
    }
}
