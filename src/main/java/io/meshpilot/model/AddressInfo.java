package io.meshpilot.model;

import com.google.protobuf.Any;
import io.meshpilot.api.workload.Address;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.util.IpAddr;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One ztunnel Address resource as istiod's model.AddressInfo: a workload or a service, its
 * xDS resource name (a workload's uid; a service's {@code namespace/hostname}), the names it may
 * also be asked by ({@code network/IP}), and its serialized form and version, computed once so
 * that a push to a hundred ztunnels serializes it once (istiod's precomputed Marshaled/Version).
 */
public record AddressInfo(String resourceName, Address address, List<String> aliases, Any any, String version) {
    public AddressInfo {
        aliases = List.copyOf(aliases);
    }

    public static AddressInfo of(Address address) {
        Any any = Any.pack(address);
        return new AddressInfo(resourceName(address), address, aliases(address), any,
                Integer.toHexString(Arrays.hashCode(any.getValue().toByteArray())));
    }

    public boolean isWorkload() {
        return address.hasWorkload();
    }

    /** istiod's AddressInfo.ResourceName: a workload's uid, a service's {@code namespace/hostname}. */
    static String resourceName(Address a) {
        return a.hasWorkload() ? a.getWorkload().getUid()
                : a.getService().getNamespace() + "/" + a.getService().getHostname();
    }

    /** istiod's AddressInfo.Aliases: {@code network/IP} of each address ({@code network/IP/length} for a prefix). */
    static List<String> aliases(Address a) {
        List<String> out = new ArrayList<>();
        if (a.hasWorkload()) {
            Workload w = a.getWorkload();
            w.getAddressesList().forEach(ip -> out.add(w.getNetwork() + "/" + ipText(ip.toByteArray())));
        } else {
            for (NetworkAddress na : a.getService().getAddressesList()) {
                String base = na.getNetwork() + "/" + ipText(na.getAddress().toByteArray());
                out.add(na.hasLength() ? base + "/" + na.getLength() : base);
            }
        }
        return out;
    }

    /** An IP's text as Go's netip and ztunnel print it (dotted IPv4, RFC 5952 IPv6). */
    public static String ipText(byte[] ip) {
        return new IpAddr(ip, "").text();
    }
}
