package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.ByteString;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.MessageOrBuilder;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.api.workload.GatewayAddress;
import io.meshpilot.api.workload.NetworkAddress;
import io.meshpilot.api.workload.Service;
import io.meshpilot.api.workload.Workload;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.util.IpAddr;
import java.io.UncheckedIOException;
import java.util.Collection;
import java.util.Comparator;

/**
 * istiod's {@code /debug/ambientz} answer (pilot/pkg/xds/debug.go {@code ambientz}):
 * {@code {workloads, services, policies}}, each entry the workload API message as protobuf JSON
 * (jsonpb: lowerCamel names, default values left out). As istiod, every IP held as bytes (a
 * workload's addresses, a service's VIPs, a waypoint's or network gateway's address) is replaced
 * by the bytes of its text, so the JSON shows the base64 of "10.1.0.1" rather than of four bytes.
 * Entries are sorted by resource name so that two reads of the same index compare equal.
 */
final class AmbientzJson {
    private static final JsonFormat.Printer PRINTER = JsonFormat.printer().omittingInsignificantWhitespace();

    private AmbientzJson() {
    }

    /**
     * @param addresses every workload and service of the ambient index
     * @param policies  ztunnel's Authorizations
     */
    static JsonObject of(Collection<AddressInfo> addresses, Collection<Authorization> policies) {
        JsonArray workloads = new JsonArray();
        JsonArray services = new JsonArray();
        addresses.stream().sorted(Comparator.comparing(AddressInfo::resourceName)).forEach(a -> {
            if (a.isWorkload()) {
                workloads.add(message(withIpText(a.address().getWorkload())));
            } else {
                services.add(message(withIpText(a.address().getService())));
            }
        });
        JsonArray authorizations = new JsonArray();
        policies.stream().sorted(Comparator.comparing((Authorization p) -> p.getNamespace() + "/" + p.getName()))
                .forEach(p -> authorizations.add(message(p)));
        JsonObject out = new JsonObject();
        out.add("workloads", workloads);
        out.add("services", services);
        out.add("policies", authorizations);
        return out;
    }

    private static Workload withIpText(Workload w) {
        Workload.Builder b = w.toBuilder().clearAddresses();
        w.getAddressesList().forEach(a -> b.addAddresses(ipText(a)));
        if (w.hasWaypoint()) {
            b.setWaypoint(withIpText(w.getWaypoint()));
        }
        if (w.hasNetworkGateway()) {
            b.setNetworkGateway(withIpText(w.getNetworkGateway()));
        }
        return b.build();
    }

    private static Service withIpText(Service s) {
        Service.Builder b = s.toBuilder().clearAddresses();
        s.getAddressesList().forEach(a -> b.addAddresses(withIpText(a)));
        if (s.hasWaypoint()) {
            b.setWaypoint(withIpText(s.getWaypoint()));
        }
        return b.build();
    }

    private static GatewayAddress withIpText(GatewayAddress g) {
        return g.hasAddress() ? g.toBuilder().setAddress(withIpText(g.getAddress())).build() : g;
    }

    private static NetworkAddress withIpText(NetworkAddress a) {
        return a.toBuilder().setAddress(ipText(a.getAddress())).build();
    }

    /** istiod's rewriteAddress: the text of a 4- or 16-byte address; anything else as it is. */
    private static ByteString ipText(ByteString raw) {
        if (raw.size() != 4 && raw.size() != 16) {
            return raw;
        }
        return ByteString.copyFromUtf8(new IpAddr(raw.toByteArray(), "").text());
    }

    private static JsonObject message(MessageOrBuilder m) {
        try {
            return JsonParser.parseString(PRINTER.print(m)).getAsJsonObject();
        } catch (InvalidProtocolBufferException e) {
            // only Any fields without a registry fail to print; these messages have none
            throw new UncheckedIOException(e);
        }
    }
}
