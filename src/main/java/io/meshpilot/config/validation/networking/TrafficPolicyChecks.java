package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.ClientTLSSettings;
import io.meshpilot.api.networking.v1alpha3.ConnectionPoolSettings;
import io.meshpilot.api.networking.v1alpha3.LoadBalancerSettings;
import io.meshpilot.api.networking.v1alpha3.LocalityLoadBalancerSetting;
import io.meshpilot.api.networking.v1alpha3.OutlierDetection;
import io.meshpilot.api.networking.v1alpha3.TrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.WarmupConfiguration;
import io.meshpilot.config.validation.Validation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * istiod's traffic policy rules (DestinationRule traffic policies and subsets, Sidecar
 * inbound connection pools): connection pool limits and durations, outlier detection, load
 * balancer (consistent hash, maglev, locality, warmup), client TLS, tunnel, port-level settings.
 */
final class TrafficPolicyChecks {
    private static final long MAGLEV_MAX_TABLE = 5_000_011L;
    private static final Set<String> TOPOLOGY_LABELS = Set.of("topology.kubernetes.io/region",
            "topology.kubernetes.io/zone", "topology.istio.io/subzone");

    private TrafficPolicyChecks() {
    }

    static void trafficPolicy(Validation v, String namespace, TrafficPolicy p) {
        if (!p.hasOutlierDetection() && !p.hasConnectionPool() && !p.hasLoadBalancer() && !p.hasTls()
                && p.getPortLevelSettingsCount() == 0 && !p.hasTunnel() && !p.hasProxyProtocol() && !p.hasRetryBudget()) {
            v.error("traffic policy must set at least one field");
            return;
        }
        if (p.hasTunnel() && p.hasProxyProtocol()) {
            v.at("proxyProtocol").error("tunnel and proxyProtocol cannot be set together");
            return;
        }
        if (p.hasOutlierDetection()) {
            outlierDetection(v.at("outlierDetection"), p.getOutlierDetection());
        }
        if (p.hasConnectionPool()) {
            connectionPool(v.at("connectionPool"), p.getConnectionPool());
        }
        if (p.hasLoadBalancer()) {
            loadBalancer(v.at("loadBalancer"), p.getLoadBalancer(), p.hasOutlierDetection());
        }
        if (p.hasTls()) {
            clientTls(v.at("tls"), namespace, p.getTls());
        }
        portLevelSettings(v.at("portLevelSettings"), namespace, p.getPortLevelSettingsList());
        if (p.hasTunnel()) {
            tunnel(v.at("tunnel"), p.getTunnel());
        }
        if (p.hasRetryBudget() && p.getRetryBudget().hasPercent()) {
            double pct = p.getRetryBudget().getPercent().getValue();
            if (Double.isNaN(pct) || pct < 0 || pct > 100) {
                v.at("retryBudget").at("percent").error("retry budget percent " + pct + " must be in the range 0..100");
            }
        }
    }

    private static void portLevelSettings(Validation v, String namespace,
                                          List<TrafficPolicy.PortTrafficPolicy> settings) {
        Map<Integer, Integer> seen = new HashMap<>();
        for (int i = 0; i < settings.size(); i++) {
            TrafficPolicy.PortTrafficPolicy s = settings.get(i);
            Validation at = v.at("[" + i + "]");
            if (!s.hasPort()) {
                at.at("port").error("port-level traffic policy must have a port");
            } else {
                int n = s.getPort().getNumber();
                if (n < 1 || n > 65535) {
                    // istiod accepts it; the setting can never apply
                    at.at("port").at("number").warn("port number " + Integer.toUnsignedString(n)
                            + " is not in the range 1..65535; this setting never applies");
                }
                Integer first = seen.putIfAbsent(n, i);
                if (first != null) {
                    // istiod accepts it; only the first setting for a port applies
                    at.at("port").at("number").warn("port " + n + " already has settings in portLevelSettings["
                            + first + "]; only the first applies");
                }
            }
            if (!s.hasOutlierDetection() && !s.hasConnectionPool() && !s.hasLoadBalancer() && !s.hasTls()) {
                at.error("port-level traffic policy must set at least one field");
                continue;
            }
            if (s.hasOutlierDetection()) {
                outlierDetection(at.at("outlierDetection"), s.getOutlierDetection());
            }
            if (s.hasConnectionPool()) {
                connectionPool(at.at("connectionPool"), s.getConnectionPool());
            }
            if (s.hasLoadBalancer()) {
                loadBalancer(at.at("loadBalancer"), s.getLoadBalancer(), s.hasOutlierDetection());
            }
            if (s.hasTls()) {
                clientTls(at.at("tls"), namespace, s.getTls());
            }
        }
    }

    static void outlierDetection(Validation v, OutlierDetection o) {
        if (o.hasBaseEjectionTime()) {
            NetworkingChecks.duration(v.at("baseEjectionTime"), o.getBaseEjectionTime());
        }
        if (o.getConsecutiveErrors() != 0) {
            v.at("consecutiveErrors").warn("consecutiveErrors is deprecated; use consecutiveGatewayErrors or "
                    + "consecutive5xxErrors");
        }
        if (!o.getSplitExternalLocalOriginErrors() && o.getConsecutiveLocalOriginFailures().getValue() > 0) {
            v.at("consecutiveLocalOriginFailures").error("consecutiveLocalOriginFailures requires "
                    + "splitExternalLocalOriginErrors to be true");
        }
        if (o.hasInterval()) {
            NetworkingChecks.duration(v.at("interval"), o.getInterval());
        }
        NetworkingChecks.percent(v.at("maxEjectionPercent"), o.getMaxEjectionPercent());
        NetworkingChecks.percent(v.at("minHealthPercent"), o.getMinHealthPercent());
    }

    static void connectionPool(Validation v, ConnectionPoolSettings s) {
        if (!s.hasHttp() && !s.hasTcp()) {
            v.error("connection pool must set at least one of tcp or http");
            return;
        }
        if (s.hasHttp()) {
            ConnectionPoolSettings.HTTPSettings h = s.getHttp();
            Validation at = v.at("http");
            nonNegative(at, "http1MaxPendingRequests", h.getHttp1MaxPendingRequests());
            nonNegative(at, "http2MaxRequests", h.getHttp2MaxRequests());
            nonNegative(at, "maxRequestsPerConnection", h.getMaxRequestsPerConnection());
            nonNegative(at, "maxRetries", h.getMaxRetries());
            nonNegative(at, "maxConcurrentStreams", h.getMaxConcurrentStreams());
            if (h.hasIdleTimeout()) {
                NetworkingChecks.duration(at.at("idleTimeout"), h.getIdleTimeout());
            }
            if (h.getH2UpgradePolicy() == ConnectionPoolSettings.HTTPSettings.H2UpgradePolicy.UPGRADE
                    && h.getUseClientProtocol()) {
                at.at("useClientProtocol").error("useClientProtocol cannot be true when h2UpgradePolicy is UPGRADE");
            }
        }
        if (s.hasTcp()) {
            ConnectionPoolSettings.TCPSettings t = s.getTcp();
            Validation at = v.at("tcp");
            nonNegative(at, "maxConnections", t.getMaxConnections());
            if (t.hasConnectTimeout()) {
                NetworkingChecks.duration(at.at("connectTimeout"), t.getConnectTimeout());
            }
            if (t.hasMaxConnectionDuration()) {
                NetworkingChecks.duration(at.at("maxConnectionDuration"), t.getMaxConnectionDuration());
            }
            // 0s disables the idle timeout
            if (t.hasIdleTimeout() && (t.getIdleTimeout().getSeconds() != 0
                    || Math.abs(t.getIdleTimeout().getNanos()) >= 1_000_000)) {
                NetworkingChecks.duration(at.at("idleTimeout"), t.getIdleTimeout());
            }
            if (t.hasTcpKeepalive()) {
                if (t.getTcpKeepalive().hasTime()) {
                    NetworkingChecks.duration(at.at("tcpKeepalive").at("time"), t.getTcpKeepalive().getTime());
                }
                if (t.getTcpKeepalive().hasInterval()) {
                    NetworkingChecks.duration(at.at("tcpKeepalive").at("interval"), t.getTcpKeepalive().getInterval());
                }
            }
        }
    }

    private static void nonNegative(Validation v, String field, int value) {
        if (value < 0) {
            v.at(field).error(field + " must not be negative (is " + value + ")");
        }
    }

    static void loadBalancer(Validation v, LoadBalancerSettings lb, boolean hasOutlierDetection) {
        if (lb.hasConsistentHash()) {
            consistentHash(v.at("consistentHash"), lb.getConsistentHash());
        }
        if (lb.hasLocalityLbSetting()) {
            locality(v.at("localityLbSetting"), lb.getLocalityLbSetting(), hasOutlierDetection);
        }
        if (lb.hasWarmupDurationSecs()) {
            NetworkingChecks.duration(v.at("warmupDurationSecs"), lb.getWarmupDurationSecs());
        }
        if (lb.hasWarmup()) {
            WarmupConfiguration w = lb.getWarmup();
            Validation at = v.at("warmup");
            if (!w.hasDuration()) {
                at.at("duration").error("warmup duration is required");
            } else {
                NetworkingChecks.duration(at.at("duration"), w.getDuration());
            }
            if (w.hasMinimumPercent() && (w.getMinimumPercent().getValue() > 100 || w.getMinimumPercent().getValue() < 0)) {
                at.at("minimumPercent").error("minimumPercent must be in the range 0..100");
            }
            if (w.hasAggression() && w.getAggression().getValue() < 1) {
                at.at("aggression").error("aggression must be at least 1");
            }
        }
    }

    private static void consistentHash(Validation v, LoadBalancerSettings.ConsistentHashLB ch) {
        switch (ch.getHashKeyCase()) {
            case HTTP_COOKIE -> {
                if (ch.getHttpCookie().getName().isEmpty()) {
                    v.at("httpCookie").at("name").error("httpCookie name is required");
                }
                if (ch.getHttpCookie().hasTtl() && (ch.getHttpCookie().getTtl().getSeconds() < 0
                        || ch.getHttpCookie().getTtl().getNanos() < 0)) {
                    v.at("httpCookie").at("ttl").error("cookie ttl must not be negative");
                }
            }
            case HTTP_HEADER_NAME -> {
                if (ch.getHttpHeaderName().isEmpty()) {
                    v.at("httpHeaderName").error("httpHeaderName must not be empty");
                }
            }
            case HTTP_QUERY_PARAMETER_NAME -> {
                if (ch.getHttpQueryParameterName().isEmpty()) {
                    v.at("httpQueryParameterName").error("httpQueryParameterName must not be empty");
                }
            }
            case USE_SOURCE_IP -> {
                if (!ch.getUseSourceIp()) {
                    v.at("useSourceIp").warn("useSourceIp: false selects no hash key");
                }
            }
            case HASHKEY_NOT_SET -> v.warn("consistent hash without a hash key (httpHeaderName, httpCookie, "
                    + "useSourceIp or httpQueryParameterName) hashes nothing");
            default -> {
            }
        }
        if (ch.getMinimumRingSize() != 0) {
            v.at("minimumRingSize").warn("minimumRingSize is deprecated; use ringHash.minimumRingSize");
            if (ch.getHashAlgorithmCase() != LoadBalancerSettings.ConsistentHashLB.HashAlgorithmCase.HASHALGORITHM_NOT_SET) {
                v.at("minimumRingSize").error("only one of minimumRingSize or ringHash/maglev can be set");
            }
        }
        if (ch.hasMaglev()) {
            long size = ch.getMaglev().getTableSize();
            Validation at = v.at("maglev").at("tableSize");
            if (size == 0) {
                at.error("maglev tableSize is required");
            } else if (Long.compareUnsigned(size, MAGLEV_MAX_TABLE) >= 0) {
                at.error("maglev tableSize must be less than " + MAGLEV_MAX_TABLE);
            } else if (!isPrime(size)) {
                at.error("maglev tableSize " + size + " must be a prime number");
            }
        }
    }

    /** Envoy's primality test for maglev table sizes. */
    static boolean isPrime(long x) {
        if (x != 0 && x < 4) {
            return true;
        }
        if ((x & 1) == 0) {
            return false;
        }
        long limit = (long) Math.sqrt((double) x);
        for (long f = 3; f <= limit; f += 2) {
            if (x % f == 0) {
                return false;
            }
        }
        return true;
    }

    static void locality(Validation v, LocalityLoadBalancerSetting lb, boolean hasOutlierDetection) {
        if (lb.getDistributeCount() > 0 && lb.getFailoverCount() > 0) {
            v.at("failover").error("distribute and failover cannot be set together");
            return;
        }
        if (lb.getFailoverCount() > 0) {
            for (int i = 0; i < lb.getFailoverPriorityCount(); i++) {
                if (TOPOLOGY_LABELS.contains(lb.getFailoverPriority(i))) {
                    v.at("failoverPriority", i).error("failover cannot be combined with the topology label \""
                            + lb.getFailoverPriority(i) + "\" in failoverPriority");
                    return;
                }
            }
        }
        List<String> sources = new ArrayList<>();
        for (int i = 0; i < lb.getDistributeCount(); i++) {
            LocalityLoadBalancerSetting.Distribute d = lb.getDistribute(i);
            Validation at = v.at("distribute", i);
            sources.add(d.getFrom());
            long total = 0;
            for (Map.Entry<String, Integer> e : d.getToMap().entrySet()) {
                long w = Integer.toUnsignedLong(e.getValue());
                if (w < 1 || w > 100) {
                    at.at("to").error("locality weight " + w + " for \"" + e.getKey() + "\" must be in the range 1..100");
                    return;
                }
                total += w;
            }
            if (total != 100) {
                at.at("to").error("locality weights must sum to 100 (sum is " + total + ")");
                return;
            }
            if (!localities(at.at("to"), new ArrayList<>(d.getToMap().keySet()))) {
                return;
            }
        }
        localities(v.at("distribute"), sources);
        if ((lb.getFailoverCount() > 0 || lb.getFailoverPriorityCount() > 0) && !hasOutlierDetection) {
            v.warn("locality failover has no effect without an outlier detection policy");
        }
        for (int i = 0; i < lb.getFailoverCount(); i++) {
            LocalityLoadBalancerSetting.Failover f = lb.getFailover(i);
            Validation at = v.at("failover", i);
            if (f.getFrom().equals(f.getTo())) {
                at.error("failover from and to must be different regions");
            }
            if (f.getFrom().contains("/") || f.getTo().contains("/")) {
                at.error("failover takes regions only (no \"/\")");
            }
            if (f.getFrom().contains("*") || f.getTo().contains("*")) {
                at.error("failover regions cannot contain the wildcard \"*\"");
            }
        }
    }

    /** Localities "region[/zone[/subzone]]", one trailing "*" at most, none covering another. */
    private static boolean localities(Validation v, List<String> localities) {
        Map<String, Map<String, Set<String>>> seen = new HashMap<>();
        for (String loc : localities) {
            long stars = loc.chars().filter(c -> c == '*').count();
            if (stars > 1 || (stars == 1 && !loc.endsWith("*"))) {
                v.error("locality \"" + loc + "\": at most one wildcard \"*\", and only at the end");
                return false;
            }
            if (seen.containsKey("*")) {
                v.error("locality \"" + loc + "\" overlaps with one given before");
                return false;
            }
            String[] parts = loc.split("/", 3);
            for (String part : parts) {
                if (part.isEmpty()) {
                    v.error("locality \"" + loc + "\" has an empty region, zone or subzone");
                    return false;
                }
            }
            String region = parts[0];
            boolean overlap;
            if (parts.length == 1) {
                overlap = seen.containsKey(region);
                seen.put(region, new HashMap<>(Map.of("*", new HashSet<>(Set.of("*")))));
            } else {
                Map<String, Set<String>> zones = seen.computeIfAbsent(region, k -> new HashMap<>());
                String zone = parts[1];
                if (parts.length == 2) {
                    overlap = zones.containsKey("*") || zones.containsKey(zone);
                    zones.put(zone, new HashSet<>(Set.of("*")));
                } else {
                    Set<String> subzones = zones.get(zone);
                    overlap = zones.containsKey("*") || (subzones != null
                            && (subzones.contains("*") || subzones.contains(parts[2])));
                    zones.computeIfAbsent(zone, k -> new HashSet<>()).add(parts[2]);
                }
            }
            if (overlap) {
                v.error("locality \"" + loc + "\" overlaps with one given before");
                return false;
            }
        }
        return true;
    }

    /** istiod's client TLS rules (agent.ValidateTLS). */
    static void clientTls(Validation v, String namespace, ClientTLSSettings tls) {
        String cred = tls.getCredentialName();
        if (cred.startsWith("configmap://")) {
            String ref = cred.substring("configmap://".length());
            int slash = ref.indexOf('/');
            String ns = slash < 0 ? namespace : ref.substring(0, slash);
            String name = slash < 0 ? ref : ref.substring(slash + 1);
            if (name.isEmpty() || name.contains("/")) {
                v.at("credentialName").error("invalid configmap:// credentialName \"" + cred + "\"");
            } else if (!ns.equals(namespace) || namespace.isEmpty()) {
                v.at("credentialName").error("a configmap:// credentialName must be in the config's namespace \""
                        + namespace + "\"");
            }
        }
        ClientTLSSettings.TLSmode mode = tls.getMode();
        if (tls.getInsecureSkipVerify().getValue()) {
            if (mode == ClientTLSSettings.TLSmode.SIMPLE
                    && (!tls.getCaCertificates().isEmpty() || !cred.isEmpty() || tls.getSubjectAltNamesCount() > 0)) {
                v.at("insecureSkipVerify").error("caCertificates, credentialName and subjectAltNames cannot be set "
                        + "when insecureSkipVerify is true");
            }
            if (mode == ClientTLSSettings.TLSmode.MUTUAL
                    && (!tls.getCaCertificates().isEmpty() || tls.getSubjectAltNamesCount() > 0)) {
                v.at("insecureSkipVerify").error("caCertificates and subjectAltNames cannot be set when "
                        + "insecureSkipVerify is true");
            }
        }
        if ((mode == ClientTLSSettings.TLSmode.SIMPLE || mode == ClientTLSSettings.TLSmode.MUTUAL) && !cred.isEmpty()) {
            if (!tls.getClientCertificate().isEmpty() || !tls.getCaCertificates().isEmpty()
                    || !tls.getPrivateKey().isEmpty() || !tls.getCaCrl().isEmpty()) {
                v.at("credentialName").error("clientCertificate, privateKey, caCertificates and caCrl cannot be set "
                        + "together with credentialName");
            }
            return;
        }
        if (mode == ClientTLSSettings.TLSmode.MUTUAL) {
            if (tls.getClientCertificate().isEmpty()) {
                v.at("clientCertificate").error("clientCertificate is required for MUTUAL TLS");
            }
            if (tls.getPrivateKey().isEmpty()) {
                v.at("privateKey").error("privateKey is required for MUTUAL TLS");
            }
        }
    }

    private static void tunnel(Validation v, TrafficPolicy.TunnelSettings t) {
        String p = t.getProtocol();
        if (!p.isEmpty() && !p.equals("CONNECT") && !p.equals("POST")) {
            v.at("protocol").error("tunnel protocol must be \"CONNECT\" or \"POST\"");
        }
        if (!NetworkingChecks.isFqdn(t.getTargetHost()) && !NetworkingChecks.isIp(t.getTargetHost())) {
            v.at("targetHost").error("tunnel targetHost \"" + t.getTargetHost() + "\" must be a valid FQDN or IP address");
        }
        NetworkingChecks.port(v.at("targetPort"), Integer.toUnsignedLong(t.getTargetPort()));
    }
}
