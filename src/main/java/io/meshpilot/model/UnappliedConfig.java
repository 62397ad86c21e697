package io.meshpilot.model;

import io.meshpilot.api.networking.v1alpha3.ClientTLSSettings;
import io.meshpilot.api.networking.v1alpha3.ConnectionPoolSettings;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.Gateway;
import io.meshpilot.api.networking.v1alpha3.HTTPMatchRequest;
import io.meshpilot.api.networking.v1alpha3.HTTPRoute;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings;
import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.networking.v1alpha3.Subset;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.VirtualService;
import io.meshpilot.api.security.v1beta1.PeerAuthentication;
import io.meshpilot.config.Config;
import io.meshpilot.config.protocol.Protocol;
import io.meshpilot.config.store.ConfigStore;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BiConsumer;

/**
 * Config MeshPilot accepts (it validates and stores it) but does not put into the generated
 * config of some proxy type, found field by field so that nothing is silently ignored: an
 * operator who set a field believes it applies. Each finding is a push-status entry keyed
 * {@code <namespace>/<name>|<field path>}, with the kind, the field and what the proxy does
 * instead. Nothing here changes what is pushed.
 *
 * <p>{@link #detect} covers Envoy sidecars and gateways and kinds no proxy receives;
 * {@link #proxyless} covers what proxyless gRPC clients and servers do not get, and is shown
 * only while such a proxy is connected (see the discovery server's live diagnostics).
 */
public final class UnappliedConfig {
    private UnappliedConfig() {
    }

    /** The Envoy-side and proxy-independent findings for the config in {@code store}. */
    static void detect(PushContext push, ConfigStore store, PushDiagnostics.Builder out) {
        for (Config c : sorted(store.list("Sidecar", null))) {
            sidecar(c, out);
        }
        for (Config c : sorted(store.list("DestinationRule", null))) {
            destinationRule(c, out);
            localityOfDnsHost(push, c, out);
        }
        for (Config c : sorted(store.list("Gateway", null))) {
            gateway(c, out);
        }
        for (Config c : sorted(store.list("ServiceEntry", null))) {
            var se = (ServiceEntry) c.spec();
            if (se.getSubjectAltNamesCount() > 0) {
                out.add(PushMetric.SERVICEENTRY_UNAPPLIED, name(c) + "|spec.subjectAltNames", "ServiceEntry "
                        + name(c) + ": spec.subjectAltNames is not applied: Istio mutual TLS to its endpoints "
                        + "verifies their service accounts only");
            }
        }
        for (Config c : sorted(store.list("ProxyConfig", null))) {
            out.add(PushMetric.PROXYCONFIG_UNAPPLIED, name(c), "ProxyConfig " + name(c) + " is not applied: its "
                    + "settings (concurrency, environment variables, image) reach a proxy through the sidecar "
                    + "injector and the proxy agent's bootstrap, and MeshPilot runs neither");
        }
        for (Config c : sorted(store.list("WorkloadGroup", null))) {
            out.add(PushMetric.WORKLOADGROUP_UNAPPLIED, name(c), "WorkloadGroup " + name(c) + " is not applied: "
                    + "it is a template for WorkloadEntries that VMs auto-register, which MeshPilot does not support; "
                    + "declare the workloads as WorkloadEntries");
        }
        peerAuthentications(push, out);
    }

    private static void sidecar(Config c, PushDiagnostics.Builder out) {
        Sidecar s = (Sidecar) c.spec();
        BiConsumer<String, String> gap = (path, why) -> out.add(PushMetric.SIDECAR_UNAPPLIED, name(c) + "|" + path,
                "Sidecar " + name(c) + ": " + path + " is not applied: " + why);
        for (int i = 0; i < s.getEgressCount(); i++) {
            var e = s.getEgress(i);
            String at = "spec.egress[" + i + "]";
            Protocol protocol = Protocol.parse(e.getPort().getProtocol());
            if (e.hasPort() && protocol == Protocol.HTTP_PROXY) {
                gap.accept(at + ".port", "no HTTP proxy listener is built on " + e.getPort().getNumber()
                        + "; the listener adds nothing");
            } else if (e.hasPort() && e.getPort().getNumber() == 0 && !protocol.isHttp()) {
                gap.accept(at + ".port", "a unix socket listener is built for HTTP protocols only, not "
                        + e.getPort().getProtocol());
            }
        }
        for (int i = 0; i < s.getIngressCount(); i++) {
            var in = s.getIngress(i);
            String at = "spec.ingress[" + i + "]";
            if (in.hasTls()) {
                gap.accept(at + ".tls", "the port's TLS is the PeerAuthentication mode's (Istio mTLS or plaintext), "
                        + "not this server TLS, as istiod's without ENABLE_TLS_ON_SIDECAR_INGRESS (off by default)");
            }
        }
    }

    private static void gateway(Config c, PushDiagnostics.Builder out) {
        var gw = (Gateway) c.spec();
        BiConsumer<String, String> gap = (path, why) -> out.add(PushMetric.GATEWAY_UNAPPLIED, name(c) + "|" + path,
                "Gateway " + name(c) + ": " + path + " is not applied: " + why);
        for (int i = 0; i < gw.getServersCount(); i++) {
            var server = gw.getServers(i);
            String at = "spec.servers[" + i + "]";
            if (!server.getTls().getCaCrl().isEmpty()) {
                gap.accept(at + ".tls.caCrl", "client certificates are not checked against " + server.getTls().getCaCrl());
            }
            if (server.getTls().getInsecureSkipVerify().getValue()) {
                gap.accept(at + ".tls.insecureSkipVerify", "a client certificate that does not verify is refused, "
                        + "not let through");
            }
        }
    }

    private static void destinationRule(Config c, PushDiagnostics.Builder out) {
        DestinationRule dr = (DestinationRule) c.spec();
        BiConsumer<String, String> gap = (path, why) -> out.add(PushMetric.DESTRULE_UNAPPLIED, name(c) + "|" + path,
                "DestinationRule " + name(c) + ": " + path + " is not applied to Envoy clusters: " + why);
        if (dr.hasTrafficPolicy()) {
            trafficPolicy("spec.trafficPolicy", dr.getTrafficPolicy(), gap);
        }
        for (int i = 0; i < dr.getSubsetsCount(); i++) {
            Subset s = dr.getSubsets(i);
            if (s.hasTrafficPolicy()) {
                trafficPolicy("spec.subsets[" + i + "].trafficPolicy", s.getTrafficPolicy(), gap);
            }
        }
    }

    private static void trafficPolicy(String at, TrafficPolicy p, BiConsumer<String, String> gap) {
        if (p.hasLoadBalancer()) {
            loadBalancer(at + ".loadBalancer", p.getLoadBalancer(), gap);
        }
        if (p.hasConnectionPool()) {
            connectionPool(at + ".connectionPool", p.getConnectionPool(), gap);
        }
        if (p.hasTls()) {
            tls(at + ".tls", p.getTls(), gap);
        }
        if (p.hasTunnel()) {
            gap.accept(at + ".tunnel", "connections are not tunnelled (no CONNECT to " + p.getTunnel().getTargetHost()
                    + ")");
        }
        if (p.hasProxyProtocol()) {
            gap.accept(at + ".proxyProtocol", "no PROXY protocol header is sent upstream");
        }
        if (p.hasRetryBudget()) {
            gap.accept(at + ".retryBudget", "retries are limited by the circuit breakers' max_retries only");
        }
        for (int i = 0; i < p.getPortLevelSettingsCount(); i++) {
            var port = p.getPortLevelSettings(i);
            String pat = at + ".portLevelSettings[" + i + "]";
            if (port.hasLoadBalancer()) {
                loadBalancer(pat + ".loadBalancer", port.getLoadBalancer(), gap);
            }
            if (port.hasConnectionPool()) {
                connectionPool(pat + ".connectionPool", port.getConnectionPool(), gap);
            }
            if (port.hasTls()) {
                tls(pat + ".tls", port.getTls(), gap);
            }
        }
    }

    private static void loadBalancer(String at, LoadBalancerSettings lb, BiConsumer<String, String> gap) {
        if (lb.getSimple() == LoadBalancerSettings.SimpleLB.PASSTHROUGH) {
            gap.accept(at + ".simple", "PASSTHROUGH is served as LEAST_REQUEST over the service's endpoints, "
                    + "not as an original-destination cluster");
        }
    }

    /**
     * Locality load balancing is applied to EDS, per proxy; the endpoints of a DNS-resolved
     * service sit inline in its cluster, which all proxies of a scope share, so they keep one
     * priority.
     */
    private static void localityOfDnsHost(PushContext push, Config c, PushDiagnostics.Builder out) {
        DestinationRule dr = (DestinationRule) c.spec();
        List<String> paths = new ArrayList<>();
        if (dr.getTrafficPolicy().getLoadBalancer().hasLocalityLbSetting()) {
            paths.add("spec.trafficPolicy.loadBalancer.localityLbSetting");
        }
        for (int i = 0; i < dr.getSubsetsCount(); i++) {
            if (dr.getSubsets(i).getTrafficPolicy().getLoadBalancer().hasLocalityLbSetting()) {
                paths.add("spec.subsets[" + i + "].trafficPolicy.loadBalancer.localityLbSetting");
            }
        }
        var dns = push.service(PushContext.resolve(dr.getHost(), c.namespace(), push.domainSuffix()))
                .filter(s -> s.resolution() == Resolution.DNS_LB || s.resolution() == Resolution.DNS_ROUND_ROBIN_LB);
        if (dns.isEmpty()) {
            return;
        }
        for (String path : paths) {
            out.add(PushMetric.DESTRULE_UNAPPLIED, name(c) + "|" + path, "DestinationRule " + name(c) + ": " + path
                    + " is not applied to " + dns.get().hostname() + ": its resolution is DNS, so its endpoints are "
                    + "inline in the cluster every proxy shares, with one priority");
        }
    }

    private static void connectionPool(String at, ConnectionPoolSettings cp, BiConsumer<String, String> gap) {
        if (cp.getHttp().getUseClientProtocol()) {
            gap.accept(at + ".http.useClientProtocol", "the upstream protocol follows the port's protocol and "
                    + "h2UpgradePolicy, not the client's");
        }
    }

    private static void tls(String at, ClientTLSSettings tls, BiConsumer<String, String> gap) {
        if (!tls.getCaCrl().isEmpty()) {
            gap.accept(at + ".caCrl", "upstream certificates are not checked against " + tls.getCaCrl());
        }
    }

    /**
     * PeerAuthentications istiod composes away (pilot_peerauthn_ignored): a selector policy in
     * the root namespace (never a workload policy) and every namespace- or mesh-wide policy but
     * the oldest of its namespace.
     */
    private static void peerAuthentications(PushContext push, PushDiagnostics.Builder out) {
        Map<String, Config> wide = new HashMap<>();
        for (Config c : push.peerAuthentications()) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            boolean selects = pa.hasSelector() && !pa.getSelector().getMatchLabelsMap().isEmpty();
            if (selects && c.namespace().equals(push.rootNamespace())) {
                out.add(PushMetric.PEERAUTHN_IGNORED, name(c), "PeerAuthentication " + name(c) + " is ignored: a "
                        + "policy with a selector in the root namespace " + push.rootNamespace()
                        + " applies to no workload (put it in the workload's namespace)");
            } else if (!selects) {
                Config oldest = wide.putIfAbsent(c.namespace(), c);
                if (oldest != null) {
                    out.add(PushMetric.PEERAUTHN_IGNORED, name(c), "PeerAuthentication " + name(c) + " is ignored: "
                            + (c.namespace().equals(push.rootNamespace()) ? "mesh" : "namespace")
                            + "-wide policy " + name(oldest) + " is older and applies");
                }
            }
        }
    }

    /**
     * What proxyless gRPC proxies do not get ({@code pilot_grpc_unapplied}): their route
     * translation covers uri and header matches, weighted destinations, timeout, retries and
     * fault; their clusters the load balancer (round robin or ring hash) of the host or subset;
     * their inbound listeners neither mTLS nor JWT.
     */
    public static PushDiagnostics proxyless(PushContext push, ConfigStore store) {
        PushDiagnostics.Builder out = PushDiagnostics.builder();
        for (Config c : sorted(store.list("VirtualService", null))) {
            virtualServiceForGrpc(c, out);
        }
        for (Config c : sorted(store.list("DestinationRule", null))) {
            destinationRuleForGrpc(c, out);
        }
        for (Config c : push.peerAuthentications()) {
            PeerAuthentication pa = (PeerAuthentication) c.spec();
            boolean enforces = pa.getMtls().getMode() == PeerAuthentication.MutualTLS.Mode.STRICT
                    || pa.getPortLevelMtlsMap().values().stream()
                    .anyMatch(m -> m.getMode() == PeerAuthentication.MutualTLS.Mode.STRICT);
            if (enforces) {
                out.add(PushMetric.GRPC_UNAPPLIED, "PeerAuthentication/" + name(c) + "|spec.mtls",
                        "PeerAuthentication " + name(c) + ": STRICT is not applied to proxyless gRPC servers: their "
                                + "inbound listeners accept plaintext");
            }
        }
        for (Config c : push.requestAuthentications()) {
            out.add(PushMetric.GRPC_UNAPPLIED, "RequestAuthentication/" + name(c) + "|spec.jwtRules",
                    "RequestAuthentication " + name(c) + " is not applied to proxyless gRPC servers: gRPC has no "
                            + "JWT filter, tokens are not validated");
        }
        return out.build();
    }

    private static void virtualServiceForGrpc(Config c, PushDiagnostics.Builder out) {
        VirtualService vs = (VirtualService) c.spec();
        BiConsumer<String, String> gap = (path, why) -> out.add(PushMetric.GRPC_UNAPPLIED,
                "VirtualService/" + name(c) + "|" + path,
                "VirtualService " + name(c) + ": " + path + " is not applied to proxyless gRPC clients: " + why);
        for (int i = 0; i < vs.getHttpCount(); i++) {
            HTTPRoute r = vs.getHttp(i);
            String at = "spec.http[" + i + "]";
            if (r.hasDelegate()) {
                gap.accept(at + ".delegate", "delegated routes are left out");
            }
            if (r.hasRedirect() || r.hasDirectResponse()) {
                gap.accept(at + (r.hasRedirect() ? ".redirect" : ".directResponse"), "the route is left out");
            }
            if (r.hasRewrite()) {
                gap.accept(at + ".rewrite", "requests keep their path and authority");
            }
            if (r.hasMirror() || r.getMirrorsCount() > 0) {
                gap.accept(at + (r.hasMirror() ? ".mirror" : ".mirrors"), "no traffic is mirrored");
            }
            if (r.hasCorsPolicy()) {
                gap.accept(at + ".corsPolicy", "gRPC has no CORS");
            }
            if (r.hasHeaders()) {
                gap.accept(at + ".headers", "request and response headers are not changed");
            }
            for (int j = 0; j < r.getMatchCount(); j++) {
                HTTPMatchRequest m = r.getMatch(j);
                List<String> ignored = new ArrayList<>();
                if (m.getQueryParamsCount() > 0) {
                    ignored.add("queryParams");
                }
                if (m.hasMethod()) {
                    ignored.add("method");
                }
                if (m.hasAuthority()) {
                    ignored.add("authority");
                }
                if (m.hasScheme()) {
                    ignored.add("scheme");
                }
                if (m.getPort() != 0) {
                    ignored.add("port");
                }
                if (m.getSourceLabelsCount() > 0) {
                    ignored.add("sourceLabels");
                }
                if (!m.getSourceNamespace().isEmpty()) {
                    ignored.add("sourceNamespace");
                }
                if (m.getWithoutHeadersCount() > 0) {
                    ignored.add("withoutHeaders");
                }
                if (m.getIgnoreUriCase()) {
                    ignored.add("ignoreUriCase");
                }
                if (!ignored.isEmpty()) {
                    gap.accept(at + ".match[" + j + "]", "the match ignores " + String.join(", ", ignored)
                            + ", so it matches more requests than written");
                }
            }
        }
        if (vs.getTcpCount() > 0) {
            gap.accept("spec.tcp", "gRPC clients use HTTP routes only");
        }
        if (vs.getTlsCount() > 0) {
            gap.accept("spec.tls", "gRPC clients use HTTP routes only");
        }
    }

    private static void destinationRuleForGrpc(Config c, PushDiagnostics.Builder out) {
        DestinationRule dr = (DestinationRule) c.spec();
        BiConsumer<String, String> gap = (path, why) -> out.add(PushMetric.GRPC_UNAPPLIED,
                "DestinationRule/" + name(c) + "|" + path,
                "DestinationRule " + name(c) + ": " + path + " is not applied to proxyless gRPC clients: " + why);
        List<Map.Entry<String, TrafficPolicy>> policies = new ArrayList<>();
        if (dr.hasTrafficPolicy()) {
            policies.add(Map.entry("spec.trafficPolicy", dr.getTrafficPolicy()));
        }
        for (int i = 0; i < dr.getSubsetsCount(); i++) {
            if (dr.getSubsets(i).hasTrafficPolicy()) {
                policies.add(Map.entry("spec.subsets[" + i + "].trafficPolicy", dr.getSubsets(i).getTrafficPolicy()));
            }
        }
        for (var e : policies) {
            TrafficPolicy p = e.getValue();
            String at = e.getKey();
            if (p.hasConnectionPool()) {
                gap.accept(at + ".connectionPool", "gRPC clusters have no circuit breakers or connection settings");
            }
            if (p.hasOutlierDetection()) {
                gap.accept(at + ".outlierDetection", "no endpoint is ejected");
            }
            if (p.hasTls()) {
                gap.accept(at + ".tls", "gRPC clients connect in plaintext");
            }
            if (p.getPortLevelSettingsCount() > 0) {
                gap.accept(at + ".portLevelSettings", "gRPC clusters take the host's or subset's policy");
            }
            var simple = p.getLoadBalancer().getSimple();
            if (p.hasLoadBalancer() && !p.getLoadBalancer().hasConsistentHash()
                    && simple != LoadBalancerSettings.SimpleLB.ROUND_ROBIN
                    && simple != LoadBalancerSettings.SimpleLB.UNSPECIFIED) {
                gap.accept(at + ".loadBalancer.simple", simple + " is served as ROUND_ROBIN (gRPC clients accept "
                        + "round robin and ring hash only)");
            }
        }
    }

    private static List<Config> sorted(List<Config> configs) {
        return configs.stream().sorted(Comparator.comparing(Config::key)).toList();
    }

    private static String name(Config c) {
        return c.namespace() + "/" + c.name();
    }
}
