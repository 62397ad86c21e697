package io.meshpilot.mesh;

import com.google.protobuf.Duration;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.api.mesh.v1alpha1.ProxyConfig;
import io.meshpilot.util.IpPrefix;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * istiod's semantic checks of mesh config and mesh networks (what its ValidateMeshConfig does
 * beyond parsing): ports, durations, the discovery address, trust domain, exportTo values,
 * extension provider names. Returns (field path, reason) pairs; the loader adds lines.
 */
public final class MeshValidator {
    private static final Pattern DNS1123_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
    private static final Pattern TRUST_DOMAIN = Pattern.compile("[A-Za-z0-9._-]+");

    /** A violation: where (JSON field path) and why. */
    public record Violation(String path, String reason) {
    }

    private MeshValidator() {
    }

    public static List<Violation> validate(MeshConfig mesh) {
        List<Violation> v = new ArrayList<>();
        port(v, "proxyListenPort", mesh.getProxyListenPort());
        if (mesh.getProxyInboundListenPort() != 0) {
            port(v, "proxyInboundListenPort", mesh.getProxyInboundListenPort());
        }
        if (mesh.hasConnectTimeout()) {
            duration(v, "connectTimeout", mesh.getConnectTimeout());
        }
        if (mesh.hasProtocolDetectionTimeout()) {
            Duration d = mesh.getProtocolDetectionTimeout();
            if (d.getSeconds() < 0 || d.getNanos() < 0) {
                v.add(new Violation("protocolDetectionTimeout", "must not be negative"));
            } else if (d.getNanos() % 1_000_000 != 0) {
                v.add(new Violation("protocolDetectionTimeout", "only durations to ms precision are supported"));
            }
        }
        if (mesh.hasDnsRefreshRate()) {
            duration(v, "dnsRefreshRate", mesh.getDnsRefreshRate());
        }
        if (mesh.getTrustDomain().isEmpty()) {
            v.add(new Violation("trustDomain", "must not be empty"));
        } else if (!TRUST_DOMAIN.matcher(mesh.getTrustDomain()).matches()) {
            v.add(new Violation("trustDomain", "\"" + mesh.getTrustDomain()
                    + "\" may contain only letters, digits, '.', '_' and '-'"));
        }
        for (int i = 0; i < mesh.getTrustDomainAliasesCount(); i++) {
            String alias = mesh.getTrustDomainAliases(i);
            if (!TRUST_DOMAIN.matcher(alias).matches()) {
                v.add(new Violation("trustDomainAliases[" + i + "]", "\"" + alias + "\" is not a valid trust domain"));
            }
        }
        if (mesh.getRootNamespace().isEmpty()) {
            v.add(new Violation("rootNamespace", "must not be empty"));
        } else if (!DNS1123_LABEL.matcher(mesh.getRootNamespace()).matches()) {
            v.add(new Violation("rootNamespace", "\"" + mesh.getRootNamespace() + "\" is not a valid namespace name"));
        }
        exportTo(v, "defaultServiceExportTo", mesh.getDefaultServiceExportToList());
        exportTo(v, "defaultVirtualServiceExportTo", mesh.getDefaultVirtualServiceExportToList());
        exportTo(v, "defaultDestinationRuleExportTo", mesh.getDefaultDestinationRuleExportToList());
        Set<String> providers = new HashSet<>();
        for (int i = 0; i < mesh.getExtensionProvidersCount(); i++) {
            String name = mesh.getExtensionProviders(i).getName();
            String path = "extensionProviders[" + i + "].name";
            if (name.isEmpty()) {
                v.add(new Violation(path, "must not be empty"));
            } else if (!providers.add(name)) {
                v.add(new Violation(path, "duplicate extension provider name \"" + name + "\""));
            }
        }
        if (mesh.hasDefaultConfig()) {
            proxyConfig(v, "defaultConfig.", mesh.getDefaultConfig());
        }
        return v;
    }

    public static List<Violation> validate(MeshNetworks networks) {
        List<Violation> v = new ArrayList<>();
        networks.getNetworksMap().forEach((name, network) -> {
            String base = "networks[" + name + "]";
            for (int i = 0; i < network.getGatewaysCount(); i++) {
                var gw = network.getGateways(i);
                String gp = base + ".gateways[" + i + "]";
                if (gw.getRegistryServiceName().isEmpty() && gw.getAddress().isEmpty()) {
                    v.add(new Violation(gp, "a gateway needs registryServiceName or address"));
                }
                port(v, gp + ".port", gw.getPort());
            }
            for (int i = 0; i < network.getEndpointsCount(); i++) {
                var ep = network.getEndpoints(i);
                if (ep.getFromCidr().isEmpty() && ep.getFromRegistry().isEmpty()) {
                    v.add(new Violation(base + ".endpoints[" + i + "]", "needs fromCidr or fromRegistry"));
                } else if (!ep.getFromCidr().isEmpty()) {
                    String why = IpPrefix.addressOrPrefixProblem(ep.getFromCidr());
                    if (why != null) {
                        v.add(new Violation(base + ".endpoints[" + i + "].fromCidr",
                                "\"" + ep.getFromCidr() + "\" is not a valid IP address or CIDR block: " + why));
                    }
                }
            }
        });
        return v;
    }

    private static void proxyConfig(List<Violation> v, String p, ProxyConfig pc) {
        if (pc.getConfigPath().isEmpty()) {
            v.add(new Violation(p + "configPath", "must not be empty"));
        }
        if (pc.hasDrainDuration()) {
            duration(v, p + "drainDuration", pc.getDrainDuration());
        }
        if (pc.hasTerminationDrainDuration()) {
            duration(v, p + "terminationDrainDuration", pc.getTerminationDrainDuration());
        }
        if (!pc.getDiscoveryAddress().isEmpty()) {
            String a = pc.getDiscoveryAddress();
            int colon = a.lastIndexOf(':');
            String reason = null;
            if (colon <= 0) {
                reason = "\"" + a + "\" must be host:port";
            } else {
                try {
                    int port = Integer.parseInt(a.substring(colon + 1));
                    if (port < 1 || port > 65535) {
                        reason = "port of \"" + a + "\" is out of range 1-65535";
                    }
                } catch (NumberFormatException e) {
                    reason = "port of \"" + a + "\" is not a number";
                }
            }
            if (reason != null) {
                v.add(new Violation(p + "discoveryAddress", reason));
            }
        }
        if (pc.getProxyAdminPort() != 0) {
            port(v, p + "proxyAdminPort", pc.getProxyAdminPort());
        }
        if (pc.getStatusPort() != 0) {
            port(v, p + "statusPort", pc.getStatusPort());
        }
        if (pc.hasConcurrency() && pc.getConcurrency().getValue() < 0) {
            v.add(new Violation(p + "concurrency", "must not be negative"));
        }
    }

    private static void port(List<Violation> v, String path, int port) {
        if (port < 1 || port > 65535) {
            v.add(new Violation(path, "port " + port + " is out of range 1-65535"));
        }
    }

    /** istiod's ValidateDuration: at least 1ms, millisecond precision. */
    private static void duration(List<Violation> v, String path, Duration d) {
        long nanos = d.getSeconds() * 1_000_000_000L + d.getNanos();
        if (nanos < 1_000_000) {
            v.add(new Violation(path, "duration must be at least 1ms"));
        } else if (d.getNanos() % 1_000_000 != 0) {
            v.add(new Violation(path, "only durations to ms precision are supported"));
        }
    }

    private static void exportTo(List<Violation> v, String path, List<String> values) {
        for (int i = 0; i < values.size(); i++) {
            String e = values.get(i);
            if (!e.equals("*") && !e.equals(".") && !e.equals("~") && !DNS1123_LABEL.matcher(e).matches()) {
                v.add(new Violation(path + "[" + i + "]", "\"" + e + "\" must be \"*\", \".\", \"~\" or a namespace name"));
            }
        }
    }
}
