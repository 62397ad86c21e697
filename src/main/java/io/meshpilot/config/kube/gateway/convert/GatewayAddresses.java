package io.meshpilot.config.kube.gateway.convert;

import io.meshpilot.config.kube.gateway.GatewayServices;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where a Gateway's servers are exposed, from its Services' instances (istiod's
 * GatewayContext.ResolveGatewayInstances): what its status reports as addresses and whether
 * it is Programmed. It considers every instance of the Services, so it shows intent rather
 * than proven readiness, as istiod's does.
 *
 * @param internal    {@code host:port} of each service port with instances
 * @param internalIps cluster addresses of those services
 * @param external    load balancer addresses
 * @param pending     load balancer services still waiting for an address
 * @param warnings    user-facing problems, sorted
 * @param allUsable   whether every warning is only "not yet" (AddressNotAssigned) rather than wrong (AddressNotUsable)
 */
public record GatewayAddresses(List<String> internal, List<String> internalIps, List<String> external,
                               List<String> pending, List<String> warnings, boolean allUsable) {
    /** istiod's label.GatewayManaged: set on Services the deployment controller made. */
    private static final String MANAGED_LABEL = "gateway.istio.io/managed";

    public GatewayAddresses {
        internal = List.copyOf(internal);
        internalIps = List.copyOf(internalIps);
        external = List.copyOf(external);
        pending = List.copyOf(pending);
        warnings = List.copyOf(warnings);
    }

    /** Resolves the {@code ports} of the {@code services} (FQDNs) that should serve a Gateway in {@code namespace}. */
    public static GatewayAddresses resolve(GatewayServices registry, String namespace, List<String> services,
                                           Set<Integer> ports) {
        Set<String> internal = new TreeSet<>();
        Set<String> internalIps = new TreeSet<>();
        Set<String> external = new TreeSet<>();
        Set<String> pending = new TreeSet<>();
        List<String> warnings = new ArrayList<>();
        boolean unusable = false;
        for (String host : services) {
            Optional<GatewayServices.ServiceView> found = registry.service(host, namespace);
            if (found.isEmpty()) {
                List<String> elsewhere = registry.namespacesOf(host).stream().map(ns -> "\"" + ns + "\"").sorted().toList();
                warnings.add(elsewhere.isEmpty() ? "hostname \"" + host + "\" not found"
                        : "hostname \"" + host + "\" not found in namespace \"" + namespace
                        + "\", but it was found in namespace(s) " + String.join(", ", elsewhere));
                unusable = true;
                continue;
            }
            GatewayServices.ServiceView svc = found.get();
            for (int port : ports) {
                List<Integer> instances = svc.endpointPorts().getOrDefault(port, List.of());
                if (!instances.isEmpty()) {
                    internal.add(host + ":" + port);
                    internalIps.addAll(svc.addresses());
                    if (!svc.externalAddresses().isEmpty()) {
                        external.addAll(svc.externalAddresses());
                    } else if (svc.type().equals("LoadBalancer") && pending.add(host)) {
                        warnings.add("address pending for hostname \"" + host + "\"");
                    }
                    continue;
                }
                if (svc.endpointPorts().values().stream().allMatch(List::isEmpty)) {
                    warnings.add("no instances found for hostname \"" + host + "\"");
                    continue;
                }
                Set<Integer> hints = new TreeSet<>();
                for (Map.Entry<Integer, List<Integer>> e : svc.endpointPorts().entrySet()) {
                    if (e.getValue().contains(port)) {
                        hints.add(e.getKey());
                    }
                }
                if (!hints.isEmpty()) {
                    warnings.add("port " + port + " not found for hostname \"" + host + "\" (hint: the service port "
                            + "should be specified, not the workload port. Did you mean one of these ports: "
                            + goList(hints) + "?)");
                    unusable = true;
                } else if (!svc.labels().containsKey(MANAGED_LABEL) || !svc.ports().contains(port)) {
                    // A managed Service that has the port but no endpoints for it yet is only syncing.
                    warnings.add("port " + port + " not found for hostname \"" + host + "\"");
                    unusable = true;
                }
            }
        }
        Collections.sort(warnings);
        return new GatewayAddresses(List.copyOf(internal), List.copyOf(internalIps), List.copyOf(external),
                List.copyOf(pending), warnings, !unusable);
    }

    /** Go's {@code %v} of a sorted string list: {@code [80 443]}. */
    private static String goList(Set<Integer> values) {
        return "[" + String.join(" ", values.stream().map(String::valueOf).sorted().toList()) + "]";
    }
}
