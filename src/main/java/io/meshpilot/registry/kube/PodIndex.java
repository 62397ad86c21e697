package io.meshpilot.registry.kube;

import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * istiod's PodCache: which ready pods have which IP, and which EndpointSlices are waiting for
 * the pod of one of their addresses. Pods and slices come from different watches, so a slice
 * may name a pod this registry has not seen; its address is then left out, and the slice is
 * converted again when the pod arrives (sending an endpoint without the pod's identity would
 * be wrong for mutual TLS). Keys are {@code namespace/name}. Written by the registry's event
 * thread only; read from any.
 */
final class PodIndex {
    private final Map<String, Set<String>> podsByIp = new ConcurrentHashMap<>();
    private final Map<String, String> ipByPod = new ConcurrentHashMap<>();
    private final Map<String, Set<String>> slicesWaitingByIp = new ConcurrentHashMap<>();

    /** Records a ready pod's IP. */
    void add(String podKey, String ip) {
        String previous = ipByPod.put(podKey, ip);
        if (previous != null && !previous.equals(ip)) {
            removeFrom(podsByIp, previous, podKey);
        }
        podsByIp.computeIfAbsent(ip, i -> new TreeSet<>()).add(podKey);
    }

    /** A pod with this IP arrived: the slices that waited for it, to convert again (empty when none). */
    Set<String> takeWaiting(String ip) {
        Set<String> waiting = slicesWaitingByIp.remove(ip);
        return waiting == null ? Set.of() : waiting;
    }

    /** Forgets a pod; true when it was known. */
    boolean remove(String podKey) {
        String ip = ipByPod.remove(podKey);
        if (ip == null) {
            return false;
        }
        removeFrom(podsByIp, ip, podKey);
        return true;
    }

    /** The ready pods with this IP, sorted ({@code namespace/name}). */
    Set<String> podsWithIp(String ip) {
        Set<String> s = podsByIp.get(ip);
        return s == null ? Set.of() : Set.copyOf(s);
    }

    void waitForPod(String sliceKey, String ip) {
        slicesWaitingByIp.computeIfAbsent(ip, i -> new TreeSet<>()).add(sliceKey);
    }

    /** A slice changed or went: it waits for none of these addresses any more. */
    void stopWaiting(String sliceKey) {
        slicesWaitingByIp.keySet().forEach(ip -> removeFrom(slicesWaitingByIp, ip, sliceKey));
    }

    private static void removeFrom(Map<String, Set<String>> m, String key, String value) {
        m.computeIfPresent(key, (k, s) -> {
            Set<String> copy = new TreeSet<>(s);
            copy.remove(value);
            return copy.isEmpty() ? null : copy;
        });
    }
}
