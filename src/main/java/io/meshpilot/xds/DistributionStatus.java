package io.meshpilot.xds;

import java.util.List;

/**
 * Has a config object reached the proxies? For its current resourceVersion: the push
 * version that carried it (0 = not pushed yet), and each connected proxy's state.
 *
 * @param proxies one entry per connected proxy (all connected proxies receive full pushes)
 */
public record DistributionStatus(String config, String resourceVersion, long pushVersion, List<ProxyStatus> proxies) {

    /** ACKED: ACKed that version (or later) for every type it watches; NACKED names the error. */
    public record ProxyStatus(String proxy, String connection, String state, String error) {
    }

    public long count(String state) {
        return proxies.stream().filter(p -> p.state().equals(state)).count();
    }
}
