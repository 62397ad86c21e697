package io.meshpilot.model;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.meshpilot.api.type.v1beta1.PolicyTargetReference;
import io.meshpilot.api.type.v1beta1.WorkloadSelector;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * istiod's TestPolicyMatcher table (pilot/pkg/model/policyattachment_test.go), the rows for
 * sidecars, Kubernetes Gateways and waypoints, as expectations for {@link WorkloadPolicyMatcher}.
 * Policies are in {@code default} unless a row says otherwise; the root namespace is
 * {@code istio-system}.
 */
class WorkloadPolicyMatcherTest {
    static final String GATEWAY_API = "gateway.networking.k8s.io";
    static final PolicyTargetReference SAMPLE_GATEWAY = ref(GATEWAY_API, "Gateway", "sample-gateway");
    static final PolicyTargetReference WAYPOINT = ref(GATEWAY_API, "Gateway", "sample-waypoint");
    static final PolicyTargetReference WAYPOINT_CLASS = ref(GATEWAY_API, "GatewayClass", "istio-waypoint");
    static final PolicyTargetReference SERVICE = ref("", "Service", "sample-svc");
    static final PolicyTargetReference SERVICE_ENTRY = ref("networking.istio.io", "ServiceEntry", "sample-svc-entry");
    static final WorkloadSelector APP = selector(Map.of("app", "my-app"));
    static final WorkloadSelector GATEWAY_PODS = selector(Map.of(WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-gateway"));
    static final WorkloadSelector WAYPOINT_PODS = selector(Map.of(WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-waypoint"));

    static final WorkloadPolicyMatcher REGULAR_APP = matcher(Map.of("app", "my-app"), false, List.of());
    static final WorkloadPolicyMatcher SAMPLE_GATEWAY_PODS = matcher(
            Map.of(WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-gateway"), false, List.of());
    static final WorkloadPolicyMatcher SAMPLE_WAYPOINT = matcher(
            Map.of(WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-waypoint"), true, List.of());
    static final WorkloadPolicyMatcher SERVICE_TARGET = matcher(Map.of("app", "my-app",
            WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-waypoint"), true,
            List.of(new WorkloadPolicyMatcher.ServiceRef("sample-svc", "default", "Kubernetes")));
    static final WorkloadPolicyMatcher SERVICE_ENTRY_TARGET = matcher(Map.of("app", "my-app",
            WorkloadPolicyMatcher.GATEWAY_NAME_LABEL, "sample-waypoint"), true,
            List.of(new WorkloadPolicyMatcher.ServiceRef("sample-svc-entry", "default", "External")));

    record Row(String name, WorkloadPolicyMatcher matcher, String policyNamespace, WorkloadSelector selector,
               List<PolicyTargetReference> refs, boolean expected) {
        @Override
        public String toString() {
            return name;
        }
    }

    static Stream<Row> rows() {
        WorkloadPolicyMatcher crossNamespace = new WorkloadPolicyMatcher("waypoint", SERVICE_TARGET.workloadLabels(), true,
                SERVICE_TARGET.services(), "");
        return Stream.of(
                new Row("non-gateway API workload and a targetRef", REGULAR_APP, "default", null, List.of(SAMPLE_GATEWAY), false),
                new Row("non-gateway API workload and a selector", REGULAR_APP, "default", APP, List.of(), true),
                new Row("non-gateway API workload and both", REGULAR_APP, "default", APP, List.of(SAMPLE_GATEWAY), false),
                new Row("non-gateway API workload and neither", REGULAR_APP, "default", null, List.of(), true),
                new Row("gateway API ingress and a targetRef", SAMPLE_GATEWAY_PODS, "default", null, List.of(SAMPLE_GATEWAY), true),
                new Row("gateway API ingress and a selector", SAMPLE_GATEWAY_PODS, "default", GATEWAY_PODS, List.of(), true),
                new Row("gateway API ingress and both", SAMPLE_GATEWAY_PODS, "default", GATEWAY_PODS, List.of(SAMPLE_GATEWAY), true),
                new Row("gateway API ingress and non-matching targetRef", SAMPLE_GATEWAY_PODS, "default", null,
                        List.of(WAYPOINT), false),
                new Row("gateway API ingress and neither", SAMPLE_GATEWAY_PODS, "default", null, List.of(), true),
                new Row("waypoint and a targetRef", SAMPLE_WAYPOINT, "default", null, List.of(WAYPOINT), true),
                new Row("waypoint and a selector", SAMPLE_WAYPOINT, "default", WAYPOINT_PODS, List.of(), false),
                new Row("waypoint and both a targetRef and a selector", SAMPLE_WAYPOINT, "default", WAYPOINT_PODS,
                        List.of(WAYPOINT), true),
                new Row("waypoint and no targetRef or selector", SAMPLE_WAYPOINT, "default", null, List.of(), false),
                new Row("waypoint and non-matching targetRef", SAMPLE_WAYPOINT, "default", null, List.of(SAMPLE_GATEWAY), false),
                new Row("waypoint and partial matching targetRefs", SAMPLE_WAYPOINT, "default", null,
                        List.of(WAYPOINT, SAMPLE_GATEWAY), true),
                new Row("service attached policy", SERVICE_TARGET, "default", null, List.of(SERVICE), true),
                new Row("service entry attached policy", SERVICE_ENTRY_TARGET, "default", null, List.of(SERVICE_ENTRY), true),
                new Row("service entry policy selecting a Service", SERVICE_TARGET, "default", null,
                        List.of(ref("networking.istio.io", "ServiceEntry", "sample-svc")), false),
                new Row("gateway attached policy with service", SERVICE_TARGET, "default", null, List.of(WAYPOINT), true),
                new Row("gateway attached policy with cross-namespace service", crossNamespace, "default", null,
                        List.of(WAYPOINT), false),
                new Row("gateway class attached policy in root namespace", SAMPLE_WAYPOINT, "istio-system", null,
                        List.of(WAYPOINT_CLASS), true),
                new Row("gateway class attached policy in non-root namespace", SAMPLE_WAYPOINT, "default", null,
                        List.of(WAYPOINT_CLASS), false),
                new Row("a Service in another namespace than the policy's", SERVICE_TARGET, "other", null, List.of(SERVICE),
                        false));
    }

    @ParameterizedTest
    @MethodSource("rows")
    void attachesAsIstiod(Row row) {
        assertEquals(row.expected(), row.matcher().attaches(row.policyNamespace(), row.selector(), row.refs()), row.name());
    }

    static WorkloadPolicyMatcher matcher(Map<String, String> labels, boolean waypoint,
                                         List<WorkloadPolicyMatcher.ServiceRef> services) {
        return new WorkloadPolicyMatcher("default", labels, waypoint, services, "istio-system");
    }

    static PolicyTargetReference ref(String group, String kind, String name) {
        return PolicyTargetReference.newBuilder().setGroup(group).setKind(kind).setName(name).build();
    }

    static WorkloadSelector selector(Map<String, String> labels) {
        return WorkloadSelector.newBuilder().putAllMatchLabels(labels).build();
    }
}
