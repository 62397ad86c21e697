package io.meshpilot.networking.envoyfilter;

import io.envoyproxy.envoy.config.cluster.v3.Cluster;
import io.envoyproxy.envoy.config.core.v3.TransportSocket;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ApplyTo;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.ClusterMatch;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.Patch.Operation;
import io.meshpilot.api.networking.v1alpha3.EnvoyFilter.PatchContext;
import io.meshpilot.model.EnvoyFilterWrapper.ConfigPatch;
import io.meshpilot.model.MergedEnvoyFilters;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** istiod's cluster_patch: MERGE (with its transport-socket rule), REMOVE and ADD of CLUSTER patches. */
final class ClusterPatcher {
    private final PatchFailures failures;

    ClusterPatcher(PatchFailures failures) {
        this.failures = failures;
    }

    /** The cluster after the MERGE and REMOVE patches of {@code context}; empty when removed. */
    Optional<Cluster> patch(PatchContext context, MergedEnvoyFilters efw, Cluster c) {
        return patch(context, efw, c, List.of());
    }

    /** @param hosts for an inbound cluster, the services behind it (its name holds none) */
    Optional<Cluster> patch(PatchContext context, MergedEnvoyFilters efw, Cluster c, List<String> hosts) {
        for (ConfigPatch cp : efw.patches(ApplyTo.CLUSTER)) {
            if (!PatchMatch.context(context, cp) || !matches(c, cp.match().getCluster(), cp.match().hasCluster(), hosts)) {
                continue;
            }
            if (cp.operation() == Operation.REMOVE) {
                return Optional.empty();
            }
            if (cp.operation() != Operation.MERGE) {
                continue;
            }
            try {
                c = merge(c, (Cluster) cp.value());
            } catch (IllegalArgumentException e) {
                failures.failed(cp, "cluster " + c.getName(), e);
            }
        }
        return Optional.of(c);
    }

    /** Clusters the ADD patches of {@code context} insert. */
    List<Cluster> inserted(PatchContext context, MergedEnvoyFilters efw) {
        List<Cluster> out = new ArrayList<>();
        for (ConfigPatch cp : efw.patches(ApplyTo.CLUSTER)) {
            if (cp.operation() == Operation.ADD && PatchMatch.addsIn(context, cp)) {
                out.add((Cluster) cp.value());
            }
        }
        return out;
    }

    /**
     * istiod: a patch with a transport socket merges only into the cluster's socket of that
     * name (its typed configs merged; the rest of the patch is then not applied); with
     * transport_socket_matches and none of that name, nothing is applied; a cluster without a
     * socket of that name takes the patch's socket as is, with the rest of the patch.
     */
    private static Cluster merge(Cluster c, Cluster patch) {
        if (!patch.hasTransportSocket()) {
            return ProtoMerge.merge(c, patch);
        }
        TransportSocket ps = patch.getTransportSocket();
        if (c.getTransportSocketMatchesCount() > 0) {
            for (int i = 0; i < c.getTransportSocketMatchesCount(); i++) {
                var m = c.getTransportSocketMatches(i);
                if (m.hasTransportSocket() && m.getTransportSocket().getName().equals(ps.getName())) {
                    return c.toBuilder().setTransportSocketMatches(i, m.toBuilder()
                            .setTransportSocket(mergeSocket(m.getTransportSocket(), ps))).build();
                }
            }
            return c;
        }
        if (c.hasTransportSocket() && c.getTransportSocket().getName().equals(ps.getName())) {
            return c.toBuilder().setTransportSocket(mergeSocket(c.getTransportSocket(), ps)).build();
        }
        return c.toBuilder().setTransportSocket(ps).build();
    }

    private static TransportSocket mergeSocket(TransportSocket dst, TransportSocket src) {
        if (!dst.hasTypedConfig() || !src.hasTypedConfig()) {
            return dst;
        }
        return dst.toBuilder().setTypedConfig(ProtoMerge.mergeAny(dst.getTypedConfig(), src.getTypedConfig())).build();
    }

    /** istiod's clusterMatch: by name alone when given, else subset, service and port of the cluster name. */
    static boolean matches(Cluster c, ClusterMatch m, boolean present, List<String> inboundHosts) {
        if (!present) {
            return true;
        }
        if (!m.getName().isEmpty()) {
            return m.getName().equals(c.getName());
        }
        String[] parts = c.getName().split("\\|", -1);
        String subset = parts.length == 4 ? parts[2] : "";
        String host = parts.length == 4 ? parts[3] : "";
        int port = 0;
        if (parts.length == 4) {
            try {
                port = Integer.parseInt(parts[1]);
            } catch (NumberFormatException e) {
                port = 0;
            }
        }
        if (!m.getSubset().isEmpty() && !m.getSubset().equals(subset)) {
            return false;
        }
        boolean inbound = parts.length == 4 && parts[0].equals("inbound") && !inboundHosts.isEmpty();
        if (!m.getService().isEmpty() && !(inbound ? inboundHosts.contains(m.getService()) : m.getService().equals(host))) {
            return false;
        }
        return m.getPortNumber() == 0 || m.getPortNumber() == port;
    }
}
