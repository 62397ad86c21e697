package io.meshpilot.networking.envoy;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Port;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ports a sidecar's own workload serves (istiod's service targets): every endpoint of a
 * service whose address is one of the proxy's IPs, one entry per workload (target) port. When
 * several services select the workload on one target port the oldest service wins, as istiod
 * (which also takes that service's protocol).
 */
final class InboundPorts {
    private InboundPorts() {
    }

    /** One workload port and the service port it serves. */
    record InboundPort(int targetPort, Port servicePort, Service service) {
    }

    static List<InboundPort> of(Proxy proxy, PushContext push) {
        List<Service> services = new ArrayList<>(push.services().values());
        services.sort(Comparator.comparing((Service s) -> s.creationTime() == null ? Instant.EPOCH : s.creationTime())
                .thenComparing(Service::hostname));
        Map<Integer, InboundPort> byPort = new TreeMap<>();
        for (Service s : services) {
            var shards = push.endpoints().shards(s.hostname(), s.namespace());
            if (shards == null) {
                continue;
            }
            for (IstioEndpoint e : shards.all()) {
                if (!proxy.ips().contains(e.address())) {
                    continue;
                }
                Port port = s.portByName(e.servicePortName()).orElse(null);
                if (port != null && e.endpointPort() > 0) {
                    byPort.putIfAbsent(e.endpointPort(), new InboundPort(e.endpointPort(), port, s));
                }
            }
        }
        return List.copyOf(byPort.values());
    }
}
