package io.meshpilot.registry.serviceentry;

import io.meshpilot.model.Resolution;
import io.meshpilot.model.Service;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * istiod's automatic addresses for ServiceEntries without one: an IP in the class E range
 * 240.240.0.0/16 per hostname, so the DNS proxy and TCP listeners can tell such services
 * apart. Wildcard hosts and NONE (passthrough) resolution get none, as in istiod. The
 * hostname's hash picks the slot (collisions probe on); an address, once given, stays with
 * its hostname until the hostname no longer needs one, so other services coming and going
 * never move it. Not thread-safe: used under the registry's lock.
 */
final class AddressAllocator {
    private static final int SLOTS = 255 * 254; // x.y with x in 0..254, y in 1..254

    private final Map<String, Integer> slotByHost = new HashMap<>();
    private final boolean[] taken = new boolean[SLOTS];

    static boolean needsAddress(Service s) {
        return Service.UNSPECIFIED_IP.equals(s.defaultAddress()) && !s.wildcard()
                && s.resolution() != Resolution.PASSTHROUGH;
    }

    /** The address of {@code hostname}, allocating one; null when the range is exhausted. */
    String assign(String hostname) {
        Integer slot = slotByHost.get(hostname);
        if (slot == null) {
            if (slotByHost.size() == SLOTS) {
                return null; // istiod runs out the same way
            }
            int s = Math.floorMod(fnv1a(hostname), SLOTS);
            while (taken[s]) {
                s = (s + 1) % SLOTS;
            }
            taken[s] = true;
            slotByHost.put(hostname, s);
            slot = s;
        }
        return "240.240." + (slot / 254) + "." + (slot % 254 + 1);
    }

    void release(String hostname) {
        Integer slot = slotByHost.remove(hostname);
        if (slot != null) {
            taken[slot] = false;
        }
    }

    private static int fnv1a(String s) {
        int h = 0x811c9dc5;
        for (byte b : s.getBytes(StandardCharsets.UTF_8)) {
            h ^= b & 0xff;
            h *= 0x01000193;
        }
        return h;
    }
}
