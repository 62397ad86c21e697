package io.meshpilot.config.validation.networking;

import io.meshpilot.api.networking.v1alpha3.WorkloadEntry;
import io.meshpilot.config.Config;
import io.meshpilot.config.validation.Validation;
import io.meshpilot.config.validation.Validator;
import java.util.Map;
import java.util.Set;

/**
 * istiod's WorkloadEntry rules (shared with ServiceEntry endpoints): an address (IP, DNS name
 * or unix socket; only without one when a network is set), port names and numbers, labels. A
 * malformed locality is only a warning: istiod accepts it.
 */
public final class WorkloadEntryValidator implements Validator {

    @Override
    public void validate(Config config, Validation v) {
        NetworkingChecks.metadata(config, v);
        WorkloadEntry we = (WorkloadEntry) config.spec();
        Validation spec = v.at("spec");
        workloadEntry(spec, we, null, true);
        locality(spec.at("locality"), we.getLocality());
    }

    /**
     * istiod's validateWorkloadEntry. {@code servicePorts} are the port names of the owning
     * ServiceEntry (null for a standalone WorkloadEntry); {@code allowFqdn} admits DNS names.
     */
    static void workloadEntry(Validation v, WorkloadEntry we, Set<String> servicePorts, boolean allowFqdn) {
        String addr = we.getAddress();
        if (addr.isEmpty()) {
            if (we.getNetwork().isEmpty()) {
                v.at("address").error("address is required (unless a network is set)");
                return;
            }
            v.at("address").warn("address is unset with network \"" + we.getNetwork() + "\"");
        }
        boolean unix = addr.startsWith(NetworkingChecks.UNIX_PREFIX);
        if (unix) {
            NetworkingChecks.unixAddress(v.at("address"), addr.substring(NetworkingChecks.UNIX_PREFIX.length()));
            if (we.getPortsCount() > 0) {
                v.at("ports").error("unix endpoint " + addr + " must not have ports");
            }
        } else if (!addr.isEmpty() && !NetworkingChecks.isIp(addr)) {
            if (!allowFqdn) {
                v.at("address").error("endpoint address \"" + addr + "\" is not a valid IP address");
            } else if (!NetworkingChecks.isFqdn(addr)) {
                v.at("address").error("endpoint address \"" + addr + "\" is not a valid FQDN or IP address");
            }
        }
        for (Map.Entry<String, Integer> e : we.getPortsMap().entrySet()) {
            Validation at = v.at("ports").at("[" + e.getKey() + "]");
            if (servicePorts != null && !servicePorts.contains(e.getKey())) {
                at.error("endpoint port \"" + e.getKey() + "\" is not a port name of the service entry");
            }
            NetworkingChecks.portName(at, e.getKey());
            NetworkingChecks.port(at, Integer.toUnsignedLong(e.getValue()));
        }
        NetworkingChecks.labels(v.at("labels"), we.getLabelsMap());
        if (unix && servicePorts != null && servicePorts.size() != 1) {
            v.at("address").error("a unix endpoint needs exactly one service port (the service entry has "
                    + servicePorts.size() + ")");
        }
    }

    /** "region[/zone[/subzone]]": istiod takes any string; one that is not this shape matches no locality. */
    static void locality(Validation v, String locality) {
        if (locality.isEmpty()) {
            return;
        }
        String[] parts = locality.split("/", -1);
        boolean ok = parts.length <= 3;
        for (String p : parts) {
            ok &= !p.isEmpty();
        }
        if (!ok) {
            v.warn("locality \"" + locality + "\" is not of the form region[/zone[/subzone]]");
        }
    }
}
