package io.meshpilot.bootstrap;

import io.meshpilot.config.ConfigKey;
import io.meshpilot.config.kube.gateway.GatewayServices;
import io.meshpilot.model.Port;
import io.meshpilot.model.Service;
import io.meshpilot.model.ServiceDiscovery;
import io.meshpilot.model.ServiceInstance;
import io.meshpilot.registry.kube.KubeServiceRegistry;
import io.meshpilot.registry.kube.KubeServiceRegistry.External;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiFunction;
import java.util.stream.Stream;

/**
 * istiod's GatewayContext over the service registries: services by hostname and namespace (the
 * ones a hostname shadows in another namespace included), their ports, cluster addresses and the
 * endpoint port of each instance; the Kubernetes Service type and external (load balancer)
 * addresses from the config cluster's Kubernetes registry, as istiod's Service attributes
 * (remote clusters' load balancers are not read).
 */
final class RegistryGatewayServices implements GatewayServices {
    private final ServiceDiscovery services;
    private final BiFunction<String, String, Optional<External>> external;

    /** @param external a service's type and external addresses by hostname and namespace; empty for none */
    RegistryGatewayServices(ServiceDiscovery services, BiFunction<String, String, Optional<External>> external) {
        this.services = services;
        this.external = external;
    }

    private Stream<Service> all() {
        ServiceDiscovery.Listing listing = services.listing();
        return Stream.concat(listing.services().stream(), listing.shadowed().stream());
    }

    @Override
    public Optional<ServiceView> service(String hostname, String namespace) {
        return all().filter(s -> s.hostname().equals(hostname) && s.namespace().equals(namespace)).findFirst()
                .map(this::view);
    }

    @Override
    public List<String> namespacesOf(String hostname) {
        Set<String> out = new TreeSet<>();
        all().filter(s -> s.hostname().equals(hostname)).forEach(s -> out.add(s.namespace()));
        return List.copyOf(out);
    }

    @Override
    public Optional<PolicyTarget> policyTarget(String kind, String namespace, String name) {
        List<Service> matching = switch (kind) {
            case PolicyTarget.SERVICE -> all().filter(s -> KubeServiceRegistry.PROVIDER.equals(s.registry())
                    && s.namespace().equals(namespace) && s.hostname().startsWith(name + "." + namespace + ".svc.")).toList();
            case PolicyTarget.SERVICE_ENTRY -> all().filter(s -> s.configKey() != null
                    && s.configKey().equals(new ConfigKey(PolicyTarget.SERVICE_ENTRY, namespace, name))).toList();
            default -> List.of();
        };
        if (matching.isEmpty()) {
            return Optional.empty();
        }
        List<String> hosts = kind.equals(PolicyTarget.SERVICE_ENTRY)
                ? matching.stream().map(Service::hostname).distinct().toList() : List.of();
        List<NamedPort> ports = matching.get(0).ports().stream().map(p -> new NamedPort(p.name(), p.port())).toList();
        return Optional.of(new PolicyTarget(kind, namespace, name, hosts, ports, matching.get(0).labels()));
    }

    private ServiceView view(Service s) {
        Set<String> addresses = new LinkedHashSet<>();
        if (!Service.UNSPECIFIED_IP.equals(s.defaultAddress())) {
            addresses.add(s.defaultAddress());
        }
        s.clusterVips().values().forEach(addresses::addAll);
        Map<Integer, List<Integer>> endpointPorts = new HashMap<>();
        for (Port p : s.ports()) {
            List<Integer> ports = new ArrayList<>();
            for (ServiceInstance i : services.instances(s, p.port(), Map.of())) {
                ports.add(i.endpoint().endpointPort());
            }
            endpointPorts.put(p.port(), ports);
        }
        Optional<External> outside = external.apply(s.hostname(), s.namespace());
        return new ServiceView(s.hostname(), s.namespace(), s.labels(), outside.map(External::type).orElse(""),
                s.ports().stream().map(Port::port).toList(), List.copyOf(addresses),
                outside.map(External::addresses).orElse(List.of()), endpointPorts);
    }
}
