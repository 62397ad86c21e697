package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.model.AddressInfo;
import io.meshpilot.model.AmbientIndexes;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * ztunnel's {@code istio.workload.Address} type (istiod's WorkloadGenerator,
 * pilot/pkg/xds/workload.go), delta only and built for it: a push sends only the addresses the
 * push request names ({@code addressesUpdated}), never the world.
 *
 * <p>Wildcard: a request is answered with every address (less those whose version the client
 * says it holds), and what the client holds or subscribed to that no longer exists is removed;
 * a push sends the named addresses that exist and removes the ones that do not. The wildcard
 * watch keeps no names (istiod elides them: a name per workload per ztunnel is megabytes at scale).
 *
 * <p>On demand (ztunnel asks by workload uid, {@code namespace/hostname} or {@code network/IP}):
 * a request is answered for the names it newly subscribes, a push for the changed names the
 * client watches; in both, the workloads of services it watches and every workload on its node
 * (NODE_NAME) are added, each sent under its own name with its {@code network/IP} aliases, and
 * the client's subscription grows by what it was sent (a VIP asked for returns pods), so their
 * later changes reach it. A name that resolves to nothing is removed.
 */
final class AddressGenerator implements Generator {
    private final Supplier<AmbientIndexes> indexes;

    AddressGenerator(Supplier<AmbientIndexes> indexes) {
        this.indexes = indexes;
    }

    /**
     * One delta answer.
     *
     * @param resources  to send
     * @param removed    names the client must drop
     * @param subscribed for on-demand, the watch's names after this answer (what was sent joins them); null: unchanged
     * @param respond    false when nothing needs sending (a push that changes nothing the client watches)
     */
    record Delta(List<Resource> resources, Set<String> removed, Set<String> subscribed, boolean respond) {
        static final Delta NOTHING = new Delta(List.of(), Set.of(), null, false);

        /** The response that sends it, with a new nonce, at {@code version} (the push's). */
        DeltaDiscoveryResponse response(long version) {
            return DeltaDiscoveryResponse.newBuilder()
                    .setTypeUrl(TypeUrls.ADDRESS)
                    .setSystemVersionInfo(Long.toString(version))
                    .setNonce(UUID.randomUUID().toString())
                    .addAllResources(resources)
                    .addAllRemovedResources(removed)
                    .build();
        }
    }

    /**
     * What the client asked in one delta request: the names it newly subscribed (for wildcard,
     * also those it says it holds) and the versions it holds (sent again only when changed).
     */
    record Ask(Set<String> subscribed, Map<String, String> held) {
    }

    /**
     * @param ask     the client's request being answered; null for a push
     * @param updated the push's addressesUpdated (ignored for a request)
     */
    Delta generateDelta(Proxy proxy, boolean wildcard, Set<String> watched, Ask ask, Set<String> updated) {
        if (ask == null && updated.isEmpty()) {
            return Delta.NOTHING;
        }
        AmbientIndexes index = indexes.get();
        if (wildcard) {
            AmbientIndexes.Resolved found = index.resolve(ask == null ? updated : Set.of());
            Set<String> have = new HashSet<>();
            List<Resource> out = resources(found.found(), ask == null ? Map.of() : ask.held(), have, false);
            Set<String> removed = new TreeSet<>(found.missing());
            if (ask != null) {
                ask.subscribed().stream().filter(n -> !have.contains(n)).forEach(removed::add);
            }
            return new Delta(out, removed, null, true);
        }
        Set<String> names = new HashSet<>();
        if (ask != null) {
            names.addAll(ask.subscribed());
        } else {
            updated.stream().filter(watched::contains).forEach(names::add);
        }
        names.addAll(index.additionalPodSubscriptions(proxy.metadata().getOrDefault("NODE_NAME", ""), names, watched));
        if (names.isEmpty()) {
            return ask != null ? new Delta(List.of(), Set.of(), null, true) : Delta.NOTHING;
        }
        AmbientIndexes.Resolved found = index.resolve(names);
        Set<String> removed = new TreeSet<>(found.missing());
        Set<String> have = new HashSet<>();
        for (AddressInfo a : found.found()) {
            a.aliases().forEach(removed::remove); // asked by IP and found: not removed
        }
        List<Resource> out = resources(found.found(), ask == null ? Map.of() : ask.held(), have, true);
        Set<String> subscribed = new HashSet<>(watched);
        subscribed.addAll(have);
        return new Delta(out, removed, subscribed, true);
    }

    /** istiod's appendAddress: each once, skipping what the client holds at this version. */
    private static List<Resource> resources(List<AddressInfo> found, Map<String, String> held, Set<String> have,
                                            boolean withAliases) {
        List<Resource> out = new ArrayList<>(found.size());
        for (AddressInfo a : found) {
            have.add(a.resourceName());
            if (a.version().equals(held.get(a.resourceName()))) {
                continue;
            }
            Resource.Builder r = Resource.newBuilder().setName(a.resourceName()).setVersion(a.version())
                    .setResource(a.any());
            if (withAliases) {
                r.addAllAliases(a.aliases());
            }
            out.add(r.build());
        }
        return out;
    }

    /** State of the world (debug, and a client that asks without delta): every address, or those named. */
    @Override
    public List<Any> generate(Proxy proxy, PushContext push, Set<String> names, boolean wildcard) {
        AmbientIndexes index = indexes.get();
        List<AddressInfo> found = wildcard ? index.all() : index.resolve(names).found();
        return found.stream().map(AddressInfo::any).toList();
    }
}
