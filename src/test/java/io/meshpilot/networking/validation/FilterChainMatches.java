package io.meshpilot.networking.validation;

import io.envoyproxy.envoy.config.core.v3.CidrRange;
import io.envoyproxy.envoy.config.listener.v3.FilterChainMatch;
import java.util.ArrayList;
import java.util.List;

/**
 * The leaves a FilterChainMatch occupies in Envoy's filter-chain tree. Envoy builds that tree
 * level by level (destination port, destination IP, server name, transport protocol,
 * application protocol, direct source IP, source type, source IP, source port), one branch per
 * list entry, and rejects a listener when two chains reach the same leaf: "multiple filter
 * chains with overlapping matching rules are defined". Two chains overlap exactly when their
 * leaf sets intersect. Unset values are the "any" branch; CIDRs compare as written (Envoy
 * masks the address first: 10.0.0.1/8 equals 10.0.0.0/8 there, not here).
 */
final class FilterChainMatches {
    /** Above this many leaves a chain is not expanded (its overlaps go unchecked). */
    static final int MAX_LEAVES = 100_000;

    private FilterChainMatches() {
    }

    /** The chain's leaves, or null when there would be more than {@link #MAX_LEAVES}. */
    static List<String> leaves(FilterChainMatch m) {
        List<List<String>> levels = List.of(
                List.of(Integer.toString(m.getDestinationPort().getValue())),
                orAny(m.getPrefixRangesList().stream().map(FilterChainMatches::cidr).toList()),
                orAny(m.getServerNamesList()),
                List.of(m.getTransportProtocol()),
                orAny(m.getApplicationProtocolsList()),
                orAny(m.getDirectSourcePrefixRangesList().stream().map(FilterChainMatches::cidr).toList()),
                List.of(m.getSourceType().name()),
                orAny(m.getSourcePrefixRangesList().stream().map(FilterChainMatches::cidr).toList()),
                orAny(m.getSourcePortsList().stream().map(String::valueOf).toList()));
        long n = 1;
        for (List<String> level : levels) {
            n *= level.size();
            if (n > MAX_LEAVES) {
                return null;
            }
        }
        List<String> out = List.of("");
        for (List<String> level : levels) {
            List<String> next = new ArrayList<>(out.size() * level.size());
            for (String prefix : out) {
                for (String v : level) {
                    next.add(prefix + "|" + v);
                }
            }
            out = next;
        }
        return out;
    }

    private static List<String> orAny(List<String> values) {
        return values.isEmpty() ? List.of("*") : values.stream().distinct().toList();
    }

    private static String cidr(CidrRange r) {
        return r.getAddressPrefix() + "/" + r.getPrefixLen().getValue();
    }
}
