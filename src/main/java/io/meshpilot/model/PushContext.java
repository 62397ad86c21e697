package io.meshpilot.model;

import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.config.Config;
import io.meshpilot.config.store.ConfigStore;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One immutable view of everything a push needs (istiod's PushContext), built for each full
 * push: services by hostname, VirtualServices by the hosts they route, DestinationRules by
 * host. Short hosts in Istio config ({@code reviews}) resolve against the config's namespace
 * and the domain suffix. Endpoints are not copied: EDS reads the live endpoint index, so
 * endpoint changes need no new PushContext.
 */
public final class PushContext {
    private final Map<String, Service> servicesByHost;
    private final Map<String, List<Config>> virtualServicesByHost;
    private final Map<String, Config> destinationRulesByHost;
    private final EndpointIndex endpoints;
    private final String domainSuffix;
    private final Instant builtAt;
    private final Duration buildTime;
    private final long version;

    private PushContext(Map<String, Service> services, Map<String, List<Config>> virtualServices,
                        Map<String, Config> destinationRules, EndpointIndex endpoints, String domainSuffix,
                        Duration buildTime, long version) {
        this.servicesByHost = Map.copyOf(services);
        this.virtualServicesByHost = Map.copyOf(virtualServices);
        this.destinationRulesByHost = Map.copyOf(destinationRules);
        this.endpoints = endpoints;
        this.domainSuffix = domainSuffix;
        this.builtAt = Instant.now();
        this.buildTime = buildTime;
        this.version = version;
    }

    /** Builds a snapshot from the registries and the config store. */
    public static PushContext build(ServiceDiscovery discovery, ConfigStore store, EndpointIndex endpoints,
                                    String domainSuffix, long version) {
        long t0 = System.nanoTime();
        Map<String, Service> services = new HashMap<>();
        for (Service s : discovery.services()) {
            services.putIfAbsent(s.hostname(), s);
        }
        Map<String, List<Config>> vs = new HashMap<>();
        List<Config> allVs = new ArrayList<>(store.list("VirtualService", null));
        allVs.sort(Comparator.comparing((Config c) -> c.creationTimestamp() == null ? Instant.EPOCH : c.creationTimestamp())
                .thenComparing(Config::key));
        for (Config c : allVs) {
            for (String host : ((VirtualService) c.spec()).getHostsList()) {
                vs.computeIfAbsent(resolve(host, c.namespace(), domainSuffix), h -> new ArrayList<>()).add(c);
            }
        }
        Map<String, Config> dr = new HashMap<>();
        for (Config c : store.list("DestinationRule", null)) {
            dr.putIfAbsent(resolve(((DestinationRule) c.spec()).getHost(), c.namespace(), domainSuffix), c);
        }
        return new PushContext(services, vs, dr, endpoints, domainSuffix, Duration.ofNanos(System.nanoTime() - t0),
                version);
    }

    /** Istio's short-name rule: a host without a dot is {@code host.namespace.svc.domain}. */
    public static String resolve(String host, String namespace, String domainSuffix) {
        if (host.contains(".") || host.equals("*")) {
            return host;
        }
        return host + "." + namespace + ".svc." + domainSuffix;
    }

    public Optional<Service> service(String hostname) {
        return Optional.ofNullable(servicesByHost.get(hostname));
    }

    public Map<String, Service> services() {
        return servicesByHost;
    }

    /** The VirtualServices routing a host, oldest first (the first match wins, as istiod merges). */
    public List<Config> virtualServices(String hostname) {
        return virtualServicesByHost.getOrDefault(hostname, List.of());
    }

    public Optional<Config> destinationRule(String hostname) {
        return Optional.ofNullable(destinationRulesByHost.get(hostname));
    }

    public EndpointIndex endpoints() {
        return endpoints;
    }

    public String domainSuffix() {
        return domainSuffix;
    }

    public int virtualServiceCount() {
        return (int) virtualServicesByHost.values().stream().flatMap(List::stream).distinct().count();
    }

    public Instant builtAt() {
        return builtAt;
    }

    public Duration buildTime() {
        return buildTime;
    }

    /** Increases with every full push; the version proxies are sent. */
    public long version() {
        return version;
    }
}
