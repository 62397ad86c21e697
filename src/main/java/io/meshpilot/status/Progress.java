package io.meshpilot.status;

import io.meshpilot.xds.DistributionStatus;

/**
 * How far one config object got to the connected proxies (istiod's distribution.Progress),
 * with what istiod does not count: how many rejected it and the first rejection.
 *
 * @param acked     proxies that ACKed the push carrying the object's current revision
 * @param total     connected proxies
 * @param nacked    proxies that NACKed it
 * @param firstNack one rejection, {@code <proxy> <type>: <error>}; empty when none
 */
public record Progress(int acked, int total, int nacked, String firstNack) {

    public static Progress of(DistributionStatus status) {
        String first = status.proxies().stream().filter(p -> p.state().equals("NACKED"))
                .map(p -> p.proxy() + " " + p.error()).findFirst().orElse("");
        return new Progress((int) status.count("ACKED"), status.proxies().size(), (int) status.count("NACKED"), first);
    }

    /** istiod's rule: reconciled once every connected proxy is up to date. */
    public boolean reconciled() {
        return acked == total;
    }

    /** istiod's message, followed by the rejections when there are any. */
    public String message() {
        String upToDate = acked + "/" + total + " proxies up to date.";
        return nacked == 0 ? upToDate : upToDate + " " + nacked + " rejected it: " + firstNack;
    }
}
