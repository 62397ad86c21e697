package io.meshpilot.networking;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import org.junit.jupiter.api.Test;

/** istiod's port-level selection and subset merge, field by field. */
class TrafficPoliciesTest {
    static TrafficPolicy policy(String json) {
        TrafficPolicy.Builder b = TrafficPolicy.newBuilder();
        try {
            JsonFormat.parser().merge(json, b);
        } catch (InvalidProtocolBufferException e) {
            throw new AssertionError(e);
        }
        return b.build();
    }

    static final TrafficPolicy HOST = policy("""
            {"loadBalancer": {"simple": "RANDOM"},
             "connectionPool": {"tcp": {"maxConnections": 10}},
             "outlierDetection": {"consecutive5xxErrors": 3},
             "tls": {"mode": "SIMPLE"},
             "tunnel": {"protocol": "CONNECT", "targetHost": "proxy", "targetPort": 8080},
             "portLevelSettings": [
               {"port": {"number": 9080}, "connectionPool": {"tcp": {"maxConnections": 90}}},
               {"port": {"number": 9080}, "connectionPool": {"tcp": {"maxConnections": 91}}}]}
            """);

    @Test
    void withoutPortEntryTheHostPolicyAppliesWithoutPortLevelSettings() {
        TrafficPolicy p = TrafficPolicies.forPort(HOST, 80);
        assertEquals(HOST.toBuilder().clearPortLevelSettings().build(), p);
    }

    @Test
    void portEntryReplacesTheWholePolicyUnsetFieldsIncluded() {
        TrafficPolicy p = TrafficPolicies.forPort(HOST, 9080);
        assertEquals(policy("""
                {"connectionPool": {"tcp": {"maxConnections": 90}}}"""), p,
                "first matching entry; load balancer, outlier detection, TLS and tunnel not inherited");
    }

    @Test
    void subsetOverridesTheHostFieldByField() {
        TrafficPolicy subset = policy("""
                {"outlierDetection": {"consecutive5xxErrors": 7}, "tls": {"mode": "DISABLE"}}""");
        TrafficPolicy p = TrafficPolicies.forSubset(HOST, subset, 80);
        assertEquals(policy("""
                {"loadBalancer": {"simple": "RANDOM"},
                 "connectionPool": {"tcp": {"maxConnections": 10}},
                 "outlierDetection": {"consecutive5xxErrors": 7},
                 "tls": {"mode": "DISABLE"},
                 "tunnel": {"protocol": "CONNECT", "targetHost": "proxy", "targetPort": 8080}}"""), p);
    }

    @Test
    void subsetMergesOverTheHostPortEntry() {
        TrafficPolicy subset = policy("""
                {"loadBalancer": {"simple": "LEAST_REQUEST"}}""");
        assertEquals(policy("""
                {"loadBalancer": {"simple": "LEAST_REQUEST"},
                 "connectionPool": {"tcp": {"maxConnections": 90}}}"""),
                TrafficPolicies.forSubset(HOST, subset, 9080));
    }

    @Test
    void subsetPortEntryReplacesTheFourFieldsEvenUnset() {
        TrafficPolicy subset = policy("""
                {"connectionPool": {"tcp": {"maxConnections": 5}},
                 "outlierDetection": {"consecutive5xxErrors": 7},
                 "portLevelSettings": [{"port": {"number": 80}, "loadBalancer": {"simple": "ROUND_ROBIN"}}]}""");
        assertEquals(policy("""
                {"loadBalancer": {"simple": "ROUND_ROBIN"},
                 "tunnel": {"protocol": "CONNECT", "targetHost": "proxy", "targetPort": 8080}}"""),
                TrafficPolicies.forSubset(HOST, subset, 80),
                "the subset's own top-level fields and the host's four fields give way to the port entry");
        assertEquals(policy("""
                {"loadBalancer": {"simple": "RANDOM"},
                 "connectionPool": {"tcp": {"maxConnections": 5}},
                 "outlierDetection": {"consecutive5xxErrors": 7},
                 "tls": {"mode": "SIMPLE"},
                 "tunnel": {"protocol": "CONNECT", "targetHost": "proxy", "targetPort": 8080}}"""),
                TrafficPolicies.forSubset(HOST, subset, 81), "another port: the subset's top-level fields");
    }

    @Test
    void subsetWithoutPolicyOrHostWithoutPolicy() {
        assertEquals(TrafficPolicies.forPort(HOST, 9080), TrafficPolicies.forSubset(HOST, null, 9080));
        TrafficPolicy subset = policy("""
                {"outlierDetection": {"consecutive5xxErrors": 7}}""");
        assertEquals(subset, TrafficPolicies.forSubset(TrafficPolicy.getDefaultInstance(), subset, 80));
    }
}
