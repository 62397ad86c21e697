package io.meshpilot.registry.kube;

import io.meshpilot.model.IstioEndpoint;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * istiod's endpointSliceCache: the converted endpoints of every EndpointSlice, per service
 * host and slice, and the host each slice feeds. A host's endpoints are its slices' together,
 * each address and port once: an endpoint moving between slices is in both for a while, and
 * the copy of the first slice (by name) wins. Used by the registry's event thread only.
 */
final class SliceEndpointCache {
    private final Map<String, Map<String, List<IstioEndpoint>>> byHost = new HashMap<>();
    /** slice key (namespace/name) -> host. */
    private final Map<String, String> hostOfSlice = new HashMap<>();

    /** Records a slice's endpoints; true when they differ from what it had. */
    boolean put(String sliceKey, String host, List<IstioEndpoint> endpoints) {
        hostOfSlice.put(sliceKey, host);
        List<IstioEndpoint> before = byHost.computeIfAbsent(host, h -> new TreeMap<>())
                .put(name(sliceKey), List.copyOf(endpoints));
        return !endpoints.equals(before);
    }

    /** Forgets a slice; true when it had endpoints recorded. */
    boolean remove(String sliceKey) {
        String host = hostOfSlice.remove(sliceKey);
        Map<String, List<IstioEndpoint>> slices = host == null ? null : byHost.get(host);
        if (slices == null) {
            return false;
        }
        boolean had = slices.remove(name(sliceKey)) != null;
        if (slices.isEmpty()) {
            byHost.remove(host);
        }
        return had;
    }

    /** The host a slice fed, or null. */
    String host(String sliceKey) {
        return hostOfSlice.get(sliceKey);
    }

    /** Keys of the slices recorded in a namespace. */
    Set<String> slicesIn(String namespace) {
        Set<String> out = new HashSet<>();
        hostOfSlice.keySet().stream().filter(k -> k.startsWith(namespace + "/")).forEach(out::add);
        return out;
    }

    List<IstioEndpoint> endpoints(String host) {
        List<IstioEndpoint> out = new ArrayList<>();
        Set<String> seen = new HashSet<>();
        for (List<IstioEndpoint> eps : byHost.getOrDefault(host, Map.of()).values()) {
            for (IstioEndpoint e : eps) {
                if (seen.add(e.address() + "|" + e.servicePortName())) {
                    out.add(e);
                }
            }
        }
        return out;
    }

    private static String name(String sliceKey) {
        return sliceKey.substring(sliceKey.indexOf('/') + 1);
    }
}
