package io.meshpilot.config.kube.gateway;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * {@link GatewayServices} over a fixed set of services, for tests of the Gateway API
 * conversion: what istiod's tests get from a PushContext built with
 * {@code core.NewConfigGenTest(Services, Instances)}. Build with {@link #builder()}.
 */
public final class TestGatewayServices implements GatewayServices {
    /** By hostname, by namespace. */
    private final Map<String, Map<String, ServiceView>> byHostname;
    /** Kubernetes Services and ServiceEntries by {@code kind/namespace/name}. */
    private final Map<String, PolicyTarget> policyTargets;

    private TestGatewayServices(Map<String, Map<String, ServiceView>> byHostname, Map<String, PolicyTarget> policyTargets) {
        this.byHostname = byHostname;
        this.policyTargets = policyTargets;
    }

    /** These services and policy targets plus {@code more} (a later one replaces one of the same kind, namespace and name). */
    public TestGatewayServices withPolicyTargets(List<PolicyTarget> more) {
        Map<String, PolicyTarget> targets = new LinkedHashMap<>(policyTargets);
        more.forEach(t -> targets.put(targetKey(t.kind(), t.namespace(), t.name()), t));
        return new TestGatewayServices(byHostname, Collections.unmodifiableMap(targets));
    }

    @Override
    public Optional<PolicyTarget> policyTarget(String kind, String namespace, String name) {
        return Optional.ofNullable(policyTargets.get(targetKey(kind, namespace, name)));
    }

    private static String targetKey(String kind, String namespace, String name) {
        return kind + "/" + namespace + "/" + name;
    }

    public static Builder builder() {
        return new Builder();
    }

    @Override
    public Optional<ServiceView> service(String hostname, String namespace) {
        return Optional.ofNullable(byHostname.getOrDefault(hostname, Map.of()).get(namespace));
    }

    @Override
    public List<String> namespacesOf(String hostname) {
        return List.copyOf(byHostname.getOrDefault(hostname, Map.of()).keySet());
    }

    /** Every service, in the order added. */
    public List<ServiceView> all() {
        return byHostname.values().stream().flatMap(m -> m.values().stream()).toList();
    }

    public static final class Builder {
        private final List<ServiceView> services = new ArrayList<>();

        private Builder() {
        }

        /** Adds {@code service}; a later service with the same hostname and namespace replaces it. */
        public Builder add(ServiceView service) {
            services.add(service);
            return this;
        }

        /**
         * Adds a ClusterIP-less service whose {@code ports} each have one instance listening
         * on the same port: the plain case, where a Gateway's port resolves to itself.
         */
        public Builder service(String hostname, String namespace, int... ports) {
            Map<Integer, List<Integer>> endpoints = new LinkedHashMap<>();
            IntStream.of(ports).forEach(p -> endpoints.put(p, List.of(p)));
            return add(new ServiceView(hostname, namespace, Map.of(), "", IntStream.of(ports).boxed().toList(), List.of(),
                    List.of(), endpoints));
        }

        public TestGatewayServices build() {
            Map<String, Map<String, ServiceView>> byHostname = new LinkedHashMap<>();
            for (ServiceView s : services) {
                byHostname.computeIfAbsent(s.hostname(), h -> new TreeMap<>()).put(s.namespace(), s);
            }
            byHostname.replaceAll((h, byNamespace) -> Collections.unmodifiableMap(byNamespace));
            return new TestGatewayServices(Collections.unmodifiableMap(byHostname), Map.of());
        }
    }
}
