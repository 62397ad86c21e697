package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.ServiceEntry;
import io.meshpilot.api.networking.v1alpha3.ServicePort;
import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import io.meshpilot.config.protocol.Protocol;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * istiod's ServiceEntry rules: hosts (at least one, valid, never "*" alone), addresses (IPs or
 * CIDRs; CIDRs only for NONE/STATIC), ports (unique names and numbers, known protocols, valid
 * target ports), endpoints per resolution (none for NONE, IPs for STATIC, IPs or DNS names for
 * DNS and at most one for DNS_ROUND_ROBIN, port names of the entry), workloadSelector and
 * endpoints exclusive, several hosts only with HTTP/TLS ports, exportTo.
 */
public final class ServiceEntryValidator implements Validator {

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        ServiceEntry se = (ServiceEntry) config.spec();
        Validation spec = v.at("spec");
        ServiceEntry.Resolution resolution = se.getResolution();
        if (se.hasWorkloadSelector()) {
            NetworkingChecks.workloadSelector(spec.at("workloadSelector").at("labels"), se.getWorkloadSelector().getLabelsMap(),
                    "workload selector without labels: the service entry applies to every workload in the namespace");
            if (se.getEndpointsCount() > 0) {
                spec.at("endpoints").error("only one of workloadSelector or endpoints can be set");
            }
        }
        if (se.getHostsCount() == 0) {
            spec.at("hosts").error("a service entry must have at least one host");
        }
        for (int i = 0; i < se.getHostsCount(); i++) {
            String host = se.getHosts(i);
            Validation at = spec.at("hosts", i);
            if (host.equals("*")) {
                at.error("host \"*\" is not allowed in a service entry");
            } else {
                NetworkingChecks.wildcardDomain(at, host);
                String partial = NetworkingChecks.partialWildcardProblem(host);
                if (partial != null) {
                    at.warn(partial);
                }
            }
        }
        boolean cidr = false;
        for (int i = 0; i < se.getAddressesCount(); i++) {
            cidr |= se.getAddresses(i).contains("/");
            NetworkingChecks.ipOrSubnet(spec.at("addresses", i), se.getAddresses(i));
        }
        if (cidr && resolution != ServiceEntry.Resolution.NONE && resolution != ServiceEntry.Resolution.STATIC) {
            spec.at("addresses").error("CIDR addresses are allowed only with resolution NONE or STATIC");
        }
        Set<String> portNames = new HashSet<>();
        Map<Integer, Integer> portNumbers = new HashMap<>();
        for (int i = 0; i < se.getPortsCount(); i++) {
            ServicePort p = se.getPorts(i);
            Validation at = spec.at("ports", i);
            if (!portNames.add(p.getName())) {
                at.at("name").error("port name \"" + p.getName() + "\" is already defined");
            }
            Integer first = portNumbers.putIfAbsent(p.getNumber(), i);
            if (first != null) {
                at.at("number").error("port " + Integer.toUnsignedString(p.getNumber()) + " is already defined (ports["
                        + first + "])");
            }
            if (p.getTargetPort() != 0) {
                NetworkingChecks.port(at.at("targetPort"), Integer.toUnsignedLong(p.getTargetPort()));
            }
            if (se.getAddressesCount() == 0 && (p.getProtocol().isEmpty() || p.getProtocol().equals("TCP"))) {
                at.at("protocol").warn("TCP (or unset) protocol ports need addresses unless IP auto-allocation is "
                        + "enabled; the port may be unreachable");
            }
            NetworkingChecks.portName(at.at("name"), p.getName());
            NetworkingChecks.protocol(at.at("protocol"), p.getProtocol());
            NetworkingChecks.port(at.at("number"), Integer.toUnsignedLong(p.getNumber()));
        }
        switch (resolution) {
            case NONE -> {
                if (se.getEndpointsCount() > 0) {
                    spec.at("endpoints").error("no endpoints can be given with resolution NONE");
                }
                if (se.hasWorkloadSelector()) {
                    spec.at("workloadSelector").warn("workloadSelector has no effect with resolution NONE");
                }
            }
            case STATIC -> {
                for (int i = 0; i < se.getEndpointsCount(); i++) {
                    WorkloadEntryValidator.workloadEntry(spec.at("endpoints", i), se.getEndpoints(i), portNames, false);
                }
            }
            case DNS, DNS_ROUND_ROBIN -> dns(spec, se, portNames);
            case DYNAMIC_DNS -> {
                // resolved per request from the Host/SNI of wildcard hosts: nothing to list
                if (se.getEndpointsCount() > 0) {
                    spec.at("endpoints").warn("endpoints are not used with resolution DYNAMIC_DNS");
                }
                if (se.hasWorkloadSelector()) {
                    spec.at("workloadSelector").warn("workloadSelector has no effect with resolution DYNAMIC_DNS");
                }
            }
            default -> spec.at("resolution").error("unsupported resolution " + resolution);
        }
        if (resolution != ServiceEntry.Resolution.NONE && se.getHostsCount() > 1) {
            for (int i = 0; i < se.getPortsCount(); i++) {
                Protocol p = Protocol.parse(se.getPorts(i).getProtocol());
                if (!p.isHttp() && !p.isTls()) {
                    spec.at("ports", i).at("protocol").error("several hosts need HTTP or TLS ports (the hosts cannot be "
                            + "told apart on protocol \"" + se.getPorts(i).getProtocol() + "\") unless resolution is NONE");
                    break;
                }
            }
        }
        NetworkingChecks.exportTo(spec.at("exportTo"), config.namespace(), se.getExportToList(), true, false);
    }

    private static void dns(Validation spec, ServiceEntry se, Set<String> portNames) {
        ServiceEntry.Resolution resolution = se.getResolution();
        if (se.getEndpointsCount() == 0) {
            for (int i = 0; i < se.getHostsCount(); i++) {
                if (!NetworkingChecks.isFqdn(se.getHosts(i))) {
                    spec.at("hosts", i).error("hosts must be FQDNs (no wildcards) when resolution is " + resolution
                            + " and no endpoints are given");
                }
            }
        }
        if (resolution == ServiceEntry.Resolution.DNS_ROUND_ROBIN && se.getEndpointsCount() > 1) {
            spec.at("endpoints").error("resolution DNS_ROUND_ROBIN takes at most one endpoint");
        }
        for (int i = 0; i < se.getEndpointsCount(); i++) {
            WorkloadEntry ep = se.getEndpoints(i);
            Validation at = spec.at("endpoints", i);
            if (!NetworkingChecks.isIp(ep.getAddress()) && !NetworkingChecks.isFqdn(ep.getAddress())) {
                at.at("address").error("endpoint address \"" + ep.getAddress() + "\" is not a valid FQDN or IP address");
            }
            NetworkingChecks.labels(at.at("labels"), ep.getLabelsMap());
            for (Map.Entry<String, Integer> e : ep.getPortsMap().entrySet()) {
                Validation pa = at.at("ports").at("[" + e.getKey() + "]");
                if (!portNames.contains(e.getKey())) {
                    pa.error("endpoint port \"" + e.getKey() + "\" is not a port name of the service entry");
                }
                NetworkingChecks.portName(pa, e.getKey());
                NetworkingChecks.port(pa, Integer.toUnsignedLong(e.getValue()));
            }
        }
        if (se.hasWorkloadSelector()) {
            spec.at("workloadSelector").warn("workloadSelector has no effect with resolution " + resolution);
        }
        if (se.getAddressesCount() > 0 && se.getHostsCount() > 1) {
            for (ServicePort p : se.getPortsList()) {
                if (Protocol.parse(p.getProtocol()).isTcp()) {
                    spec.at("hosts").warn("a service entry with addresses and a TCP port should have only one host");
                    break;
                }
            }
        }
    }
}
