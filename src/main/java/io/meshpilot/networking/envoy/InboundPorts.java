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
        Map<String, List<Candidate>> byIp = index(push);
        List<Candidate> mine = new ArrayList<>();
        for (String ip : proxy.ips()) {
            mine.addAll(byIp.getOrDefault(ip, List.of()));
        }
        mine.sort(Comparator.comparingInt(Candidate::rank)); // the oldest service wins a port
        Map<Integer, InboundPort> byPort = new TreeMap<>();
        for (Candidate c : mine) {
            byPort.putIfAbsent(c.port().targetPort(), c.port());
        }
        return List.copyOf(byPort.values());
    }

    /** An inbound port of the endpoint at some address, with its service's age rank. */
    private record Candidate(int rank, InboundPort port) {
    }

    private record Indexed(PushContext push, Map<String, List<Candidate>> byIp) {
    }

    /**
     * Endpoints by address, built once per push context: every sidecar's CDS and LDS asks for
     * its own ports, and scanning every service's endpoints per proxy grows with proxies x
     * endpoints. (Endpoint-only changes between full pushes are seen at the next full push.)
     */
    private static volatile Indexed last;

    private static Map<String, List<Candidate>> index(PushContext push) {
        Indexed cached = last;
        if (cached != null && cached.push() == push) {
            return cached.byIp();
        }
        List<Service> services = new ArrayList<>(push.services().values());
        services.sort(Comparator.comparing((Service s) -> s.creationTime() == null ? Instant.EPOCH : s.creationTime())
                .thenComparing(Service::hostname));
        Map<String, List<Candidate>> byIp = new java.util.HashMap<>();
        for (int rank = 0; rank < services.size(); rank++) {
            Service s = services.get(rank);
            var shards = push.endpoints().shards(s.hostname(), s.namespace());
            if (shards == null) {
                continue;
            }
            for (IstioEndpoint e : shards.all()) {
                Port port = s.portByName(e.servicePortName()).orElse(null);
                if (port != null && e.endpointPort() > 0) {
                    byIp.computeIfAbsent(e.address(), a -> new ArrayList<>())
                            .add(new Candidate(rank, new InboundPort(e.endpointPort(), port, s)));
                }
            }
        }
        last = new Indexed(push, byIp);
        return byIp;
    }

    /** The ports as a key (equal for proxies whose inbound clusters are equal). */
    static String key(Proxy proxy, PushContext push) {
        StringBuilder sb = new StringBuilder();
        for (InboundPort p : of(proxy, push)) {
            sb.append(p.targetPort()).append('/').append(p.servicePort().name()).append('/')
                    .append(p.service().hostname()).append(',');
        }
        return sb.toString();
    }
}
