package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.CaptureMode;
import io.meshpilot.api.networking.v1alpha3.IstioEgressListener;
import io.meshpilot.api.networking.v1alpha3.IstioIngressListener;
import io.meshpilot.api.networking.v1alpha3.OutboundTrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.ServerTLSSettings;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.SidecarPort;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import io.meshpilot.config.protocol.Protocol;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * istiod's Sidecar rules: not empty; ingress listeners with a unique valid port, a bind IP, a
 * default endpoint of the form 127.0.0.1:PORT, 0.0.0.0:PORT, [::1]:PORT, [::]:PORT or
 * unix://PATH, TLS only on HTTPS/TLS ports and without Istio-managed modes; egress listeners
 * with unique ports (or unix sockets with capture mode DEFAULT/NONE), at most one without a
 * port and that one last, "namespace/host" hosts; connection pools; an egress proxy only with
 * outbound mode ALLOW_ANY.
 */
public final class SidecarValidator implements Validator {
    private static final Set<String> DEFAULT_ENDPOINT_HOSTS = Set.of("", "127.0.0.1", "0.0.0.0", "::1", "::");

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        Sidecar sc = (Sidecar) config.spec();
        Validation spec = v.at("spec");
        if (sc.hasWorkloadSelector()) {
            NetworkingChecks.workloadSelector(spec.at("workloadSelector").at("labels"), sc.getWorkloadSelector().getLabelsMap(),
                    "workload selector without labels: the sidecar applies to every workload in the namespace");
        }
        if (sc.getEgressCount() == 0 && sc.getIngressCount() == 0 && !sc.hasOutboundTrafficPolicy()
                && !sc.hasInboundConnectionPool()) {
            spec.at("egress").error("empty sidecar: set ingress, egress, outboundTrafficPolicy or inboundConnectionPool");
            return;
        }
        Map<Integer, Integer> ports = new HashMap<>();
        for (int i = 0; i < sc.getIngressCount(); i++) {
            ingress(spec.at("ingress", i), sc.getIngress(i), ports, i);
        }
        if (sc.hasInboundConnectionPool()) {
            TrafficPolicyChecks.connectionPool(spec.at("inboundConnectionPool"), sc.getInboundConnectionPool());
        }
        egress(spec, sc, config.namespace());
        if (sc.hasOutboundTrafficPolicy()) {
            outboundTrafficPolicy(spec.at("outboundTrafficPolicy"), sc.getOutboundTrafficPolicy());
        }
    }

    private static void ingress(Validation v, IstioIngressListener in, Map<Integer, Integer> ports, int index) {
        if (!in.hasPort()) {
            v.at("port").error("port is required for ingress listeners");
            return;
        }
        SidecarPort port = in.getPort();
        if (port.getTargetPort() != 0) {
            v.at("port").at("targetPort").error("targetPort has no effect on Sidecars; remove it");
        }
        portAndBind(v, port, in.getBind());
        Integer first = ports.putIfAbsent(port.getNumber(), index);
        if (first != null) {
            v.at("port").at("number").error("port " + Integer.toUnsignedString(port.getNumber())
                    + " is already used by ingress[" + first + "]; ingress ports must be unique");
        }
        String endpoint = in.getDefaultEndpoint();
        if (!endpoint.isEmpty()) {
            defaultEndpoint(v.at("defaultEndpoint"), endpoint);
        }
        if (in.hasTls()) {
            ServerTLSSettings tls = in.getTls();
            Validation at = v.at("tls");
            if (tls.getSubjectAltNamesCount() > 0) {
                at.at("subjectAltNames").error("subjectAltNames is not supported in sidecar ingress TLS");
            }
            if (tls.getHttpsRedirect()) {
                at.at("httpsRedirect").error("httpsRedirect is not supported in sidecar ingress TLS");
            }
            if (!tls.getCredentialName().isEmpty()) {
                at.at("credentialName").error("credentialName is not supported in sidecar ingress TLS");
            }
            if (tls.getCredentialNamesCount() > 0) {
                at.at("credentialNames").error("credentialNames is not supported in sidecar ingress TLS");
            }
            if (tls.getTlsCertificatesCount() > 0) {
                at.at("tlsCertificates").error("tlsCertificates is not supported in sidecar ingress TLS");
            }
            if (tls.getMode() == ServerTLSSettings.TLSmode.ISTIO_MUTUAL
                    || tls.getMode() == ServerTLSSettings.TLSmode.AUTO_PASSTHROUGH) {
                at.at("mode").error("mode " + tls.getMode() + " cannot be used in sidecar ingress TLS");
            }
            if (!Protocol.parse(port.getProtocol()).isTls()) {
                at.error("TLS settings need an HTTPS or TLS port (protocol is \"" + port.getProtocol() + "\")");
            }
            GatewayValidator.serverTls(at, tls);
        }
        if (in.hasConnectionPool()) {
            TrafficPolicyChecks.connectionPool(v.at("connectionPool"), in.getConnectionPool());
            if (in.getConnectionPool().hasHttp() && !Protocol.parse(port.getProtocol()).isHttp()) {
                v.at("connectionPool").at("http").warn("HTTP connection pool settings on port "
                        + Integer.toUnsignedString(port.getNumber()) + " whose protocol is not HTTP (\""
                        + port.getProtocol() + "\"); only the TCP settings apply");
            }
        }
    }

    private static void portAndBind(Validation v, SidecarPort port, String bind) {
        Validation at = v.at("port");
        if (!port.getName().isEmpty()) {
            NetworkingChecks.portName(at.at("name"), port.getName());
        }
        NetworkingChecks.protocol(at.at("protocol"), port.getProtocol());
        NetworkingChecks.port(at.at("number"), Integer.toUnsignedLong(port.getNumber()));
        if (!bind.isEmpty()) {
            NetworkingChecks.ip(v.at("bind"), bind);
        }
    }

    /** 127.0.0.1:PORT, 0.0.0.0:PORT, [::1]:PORT, [::]:PORT, :PORT or unix://PATH. */
    private static void defaultEndpoint(Validation v, String endpoint) {
        if (endpoint.startsWith(NetworkingChecks.UNIX_PREFIX)) {
            NetworkingChecks.unixAddress(v, endpoint.substring(NetworkingChecks.UNIX_PREFIX.length()));
            return;
        }
        String host;
        String port;
        if (endpoint.startsWith("[")) {
            int close = endpoint.indexOf(']');
            if (close < 0 || close + 1 >= endpoint.length() || endpoint.charAt(close + 1) != ':') {
                v.error("defaultEndpoint \"" + endpoint + "\" is not of the form host:port");
                return;
            }
            host = endpoint.substring(1, close);
            port = endpoint.substring(close + 2);
        } else {
            int colon = endpoint.lastIndexOf(':');
            if (colon < 0 || endpoint.indexOf(':') != colon) {
                v.error("defaultEndpoint \"" + endpoint + "\" is not of the form host:port");
                return;
            }
            host = endpoint.substring(0, colon);
            port = endpoint.substring(colon + 1);
        }
        if (!DEFAULT_ENDPOINT_HOSTS.contains(host)) {
            v.error("defaultEndpoint must be 127.0.0.1:<port>, 0.0.0.0:<port>, [::1]:<port>, [::]:<port> or "
                    + "unix://<path> (is \"" + endpoint + "\")");
        }
        long number;
        try {
            number = Long.parseLong(port);
        } catch (NumberFormatException e) {
            v.error("defaultEndpoint port \"" + port + "\" is not a number");
            return;
        }
        NetworkingChecks.port(v, number);
    }

    private static void egress(Validation spec, Sidecar sc, String namespace) {
        Set<Integer> ports = new HashSet<>();
        Set<String> sockets = new HashSet<>();
        boolean catchAll = false;
        for (int i = 0; i < sc.getEgressCount(); i++) {
            IstioEgressListener eg = sc.getEgress(i);
            Validation at = spec.at("egress", i);
            if (!eg.hasPort()) {
                if (catchAll) {
                    at.at("port").error("only one egress listener can have no port");
                    continue;
                }
                if (i == sc.getEgressCount() - 1) {
                    catchAll = true;
                } else {
                    at.at("port").error("the egress listener without a port must be the last listener");
                }
            } else {
                SidecarPort port = eg.getPort();
                if (port.getTargetPort() != 0) {
                    at.at("port").at("targetPort").error("targetPort has no effect on Sidecars; remove it");
                }
                egressPort(at, port, eg.getBind(), eg.getCaptureMode());
                if (port.getNumber() == 0) {
                    if (!sockets.add(eg.getBind())) {
                        at.at("bind").error("unix domain socket " + eg.getBind() + " is already used by another listener");
                    }
                } else if (!ports.add(port.getNumber())) {
                    at.at("port").at("number").error("port " + Integer.toUnsignedString(port.getNumber())
                            + " is already used by another egress listener");
                }
            }
            egressHosts(at.at("hosts"), eg, namespace);
        }
    }

    private static void egressPort(Validation v, SidecarPort port, String bind, CaptureMode capture) {
        if (!port.getName().isEmpty()) {
            NetworkingChecks.portName(v.at("port").at("name"), port.getName());
        }
        NetworkingChecks.protocol(v.at("port").at("protocol"), port.getProtocol());
        if (port.getNumber() == 0) {
            // port 0: a unix domain socket listener
            if (!bind.startsWith(NetworkingChecks.UNIX_PREFIX)) {
                v.at("bind").error("a listener with port 0 must bind to a unix domain socket (unix://PATH)");
            } else {
                NetworkingChecks.unixAddress(v.at("bind"), bind.substring(NetworkingChecks.UNIX_PREFIX.length()));
            }
            if (capture != CaptureMode.DEFAULT && capture != CaptureMode.NONE) {
                v.at("captureMode").error("captureMode must be DEFAULT or NONE for unix domain socket listeners");
            }
        } else {
            NetworkingChecks.port(v.at("port").at("number"), Integer.toUnsignedLong(port.getNumber()));
            if (!bind.isEmpty()) {
                NetworkingChecks.ip(v.at("bind"), bind);
            }
        }
    }

    private static void egressHosts(Validation v, IstioEgressListener eg, String namespace) {
        if (eg.getHostsCount() == 0) {
            v.error("an egress listener must have at least one host");
            return;
        }
        Map<String, Set<String>> byNamespace = new HashMap<>();
        for (int j = 0; j < eg.getHostsCount(); j++) {
            String host = eg.getHosts(j);
            Validation at = v.at("[" + j + "]");
            int slash = host.indexOf('/');
            if (slash >= 0) {
                String ns = host.substring(0, slash);
                String svc = host.substring(slash + 1);
                if (ns.equals(".")) {
                    ns = namespace;
                }
                Set<String> svcs = byNamespace.computeIfAbsent(ns, k -> new HashSet<>());
                if (svc.equals("*") ? !svcs.isEmpty() : (svcs.contains(svc) || svcs.contains("*"))) {
                    at.warn("duplicated egress host " + host);
                }
                svcs.add(svc);
            }
            NetworkingChecks.namespaceSlashHost(at, host, false);
        }
        if (byNamespace.getOrDefault("*", Set.of()).contains("*") && byNamespace.size() != 1) {
            v.warn("\"*/*\" already selects everything; the other hosts add nothing");
        }
    }

    private static void outboundTrafficPolicy(Validation v, OutboundTrafficPolicy p) {
        if (!p.hasEgressProxy()) {
            return;
        }
        Validation at = v.at("egressProxy");
        if (p.getMode() != OutboundTrafficPolicy.Mode.ALLOW_ANY) {
            at.error("egressProxy can only be set with outbound traffic policy mode ALLOW_ANY");
            return;
        }
        NetworkingChecks.fqdn(at.at("host"), p.getEgressProxy().getHost());
        if (!p.getEgressProxy().hasPort()) {
            at.at("port").error("egressProxy must have a port");
            return;
        }
        VirtualServiceValidator.destination(at, p.getEgressProxy());
    }
}
