package io.meshpilot.networking.envoy;

import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.api.networking.v1alpha3.CaptureMode;
import io.meshpilot.api.networking.v1alpha3.IstioIngressListener;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.model.Port;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushMetric;
import io.meshpilot.model.Service;
import io.meshpilot.util.IpAddr;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The ports a sidecar's own workload serves (istiod's service targets): every endpoint of a
 * service whose address is one of the proxy's IPs, one entry per workload (target) port; or,
 * when the proxy's Sidecar declares ingress listeners, exactly those ports. When
 * several services select the workload on one target port the oldest service wins, as istiod
 * (which also takes that service's protocol).
 */
final class InboundPorts {
    private InboundPorts() {
    }

    /**
     * One workload port and the service port it serves.
     *
     * @param service         the service whose endpoint this is; null for a Sidecar ingress port no service targets
     * @param defaultEndpoint a Sidecar ingress listener's {@code defaultEndpoint} ({@code 127.0.0.1:8080},
     *                        {@code 0.0.0.0:8080}, {@code unix://...}); null: the original destination
     * @param bind            where a Sidecar ingress port is named and bound: its {@code bind}, else the
     *                        proxy's first global-unicast IP, else 0.0.0.0; empty for a service port (0.0.0.0)
     * @param bound           captureMode NONE: the port is a listener binding its own socket, not
     *                        chains of virtualInbound (istiod's getBindToPort)
     */
    record InboundPort(int targetPort, Port servicePort, Service service, String defaultEndpoint, String bind,
                       boolean bound) {
        InboundPort(int targetPort, Port servicePort, Service service) {
            this(targetPort, servicePort, service, null, "", false);
        }

        /** Where the port's chains (and, when bound, its listener) are named and bound: the bind, else 0.0.0.0. */
        String address() {
            return bind.isEmpty() ? EnvoyFilters.WILDCARD : bind;
        }

        String hostname() {
            return service == null ? "" : service.hostname();
        }
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
            InboundPort old = byPort.putIfAbsent(c.port().targetPort(), c.port());
            if (old != null) {
                reportConflict(proxy, push, old, c.port());
            }
            if (!c.ready()) {
                push.addMetric(PushMetric.ENDPOINT_NOT_READY, proxy.id(), proxy.id(), "");
            }
        }
        if (mine.isEmpty() && proxy.type() == Proxy.Type.SIDECAR && !proxy.proxyless()) {
            push.addMetric(PushMetric.NO_IP, proxy.id(), proxy.id(), "");
        }
        var sidecar = push.scope(proxy).sidecar();
        if (sidecar != null && ((Sidecar) sidecar.spec()).getIngressCount() > 0) {
            return ingress((Sidecar) sidecar.spec(), byPort, ingressBindIp(proxy));
        }
        return List.copyOf(byPort.values());
    }

    /**
     * istiod's ServiceTargets: every service port whose endpoint is at one of the proxy's
     * addresses, oldest service first, several services on one workload port each kept
     * (a Gateway selected by service must see all of them, not only the winner of the port).
     */
    static List<InboundPort> serviceTargets(Proxy proxy, PushContext push) {
        Map<String, List<Candidate>> byIp = index(push);
        List<Candidate> mine = new ArrayList<>();
        for (String ip : proxy.ips()) {
            mine.addAll(byIp.getOrDefault(ip, List.of()));
        }
        mine.sort(Comparator.comparingInt(Candidate::rank));
        return mine.stream().map(Candidate::port).distinct().toList();
    }

    /**
     * istiod's reportInboundConflict: two services of other protocols targeting one workload
     * port is a real conflict (the oldest wins); the same protocol is only skipped.
     */
    private static void reportConflict(Proxy proxy, PushContext push, InboundPort old, InboundPort incoming) {
        if (old.servicePort().protocol() != incoming.servicePort().protocol()
                && !old.hostname().equals(incoming.hostname())) {
            push.addMetric(PushMetric.CONFLICT_INBOUND_LISTENER, proxy.id(), proxy.id(),
                    "Conflicting inbound listener:" + incoming.targetPort() + ". existing: " + old.hostname()
                            + ", incoming: " + incoming.hostname());
        }
    }

    /**
     * istiod with Sidecar ingress listeners: exactly those ports, each to its
     * {@code defaultEndpoint}, named after the service that targets the port if one does.
     */
    private static List<InboundPort> ingress(Sidecar sidecar, Map<Integer, InboundPort> services, String defaultBind) {
        Map<Integer, InboundPort> out = new TreeMap<>();
        for (IstioIngressListener l : sidecar.getIngressList()) {
            int number = l.getPort().getNumber();
            InboundPort served = services.get(number);
            Protocol protocol = l.getPort().getProtocol().isEmpty() ? Protocol.fromPortName(l.getPort().getName())
                    : Protocol.parse(l.getPort().getProtocol());
            Port port = new Port(l.getPort().getName(), number, protocol);
            out.putIfAbsent(number, new InboundPort(number, port, served == null ? null : served.service(),
                    l.getDefaultEndpoint().isEmpty() ? null : l.getDefaultEndpoint(),
                    l.getBind().isEmpty() ? defaultBind : l.getBind(),
                    l.getCaptureMode() == CaptureMode.NONE));
        }
        return List.copyOf(out.values());
    }

    /**
     * Where a Sidecar ingress port without {@code bind} is named and bound: istiod's
     * getSidecarInboundBindIPs (networking/core/listener_address.go), the proxy's first
     * global-unicast IP (Go's netip IsGlobalUnicast: private ranges count, loopback, link-local,
     * multicast, unspecified and broadcast do not), else the wildcard. A pod-IP bind leaves a
     * captureMode NONE port free for an application listening on 127.0.0.1 at the same port.
     */
    private static String ingressBindIp(Proxy proxy) {
        for (String ip : proxy.ips()) {
            if (IpAddr.isAddress(ip) && IpAddr.parse(ip).isGlobalUnicast()) { // istiod skips what does not parse
                return ip;
            }
        }
        return EnvoyFilters.WILDCARD;
    }

    /** An inbound port of the endpoint at some address, with its service's age rank. */
    private record Candidate(int rank, InboundPort port, boolean ready) {
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
        Map<String, List<Candidate>> byIp = new HashMap<>();
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
                            .add(new Candidate(rank, new InboundPort(e.endpointPort(), port, s),
                                    e.health() != IstioEndpoint.HealthStatus.UNHEALTHY));
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
                    .append(p.servicePort().protocol()).append('/').append(p.hostname()).append('/')
                    .append(p.defaultEndpoint()).append('/').append(p.address()).append('/').append(p.bound())
                    .append(',');
        }
        return sb.toString();
    }
}
