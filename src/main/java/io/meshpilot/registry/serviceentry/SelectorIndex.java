package io.meshpilot.registry.serviceentry;

import io.meshpilot.config.ConfigKey;
import io.meshpilot.util.LabelSelector;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Which ServiceEntries' workload selectors could match a set of labels, without looking at
 * every ServiceEntry: each selector is indexed under one of its label pairs (per namespace),
 * so a WorkloadEntry change only checks the selectors sharing a label with it. Selectors with
 * no labels select every workload of their namespace.
 */
final class SelectorIndex {
    private record Pair(String namespace, String key, String value) {
    }

    private final Map<Pair, Set<ConfigKey>> byPair = new HashMap<>();
    private final Map<String, Set<ConfigKey>> matchAll = new HashMap<>();
    private final Map<ConfigKey, Map<String, String>> selectors = new HashMap<>();

    void put(ConfigKey se, Map<String, String> selector) {
        remove(se);
        selectors.put(se, Map.copyOf(selector));
        if (selector.isEmpty()) {
            matchAll.computeIfAbsent(se.namespace(), n -> new HashSet<>()).add(se);
        } else {
            // the smallest key is as good as any: the full selector is checked on lookup
            String k = selector.keySet().stream().min(String::compareTo).orElseThrow();
            byPair.computeIfAbsent(new Pair(se.namespace(), k, selector.get(k)), p -> new HashSet<>()).add(se);
        }
    }

    void remove(ConfigKey se) {
        Map<String, String> old = selectors.remove(se);
        if (old == null) {
            return;
        }
        if (old.isEmpty()) {
            Set<ConfigKey> s = matchAll.get(se.namespace());
            if (s != null) {
                s.remove(se);
            }
        } else {
            String k = old.keySet().stream().min(String::compareTo).orElseThrow();
            Set<ConfigKey> s = byPair.get(new Pair(se.namespace(), k, old.get(k)));
            if (s != null) {
                s.remove(se);
            }
        }
    }

    /** ServiceEntries in {@code namespace} whose selector matches {@code labels}. */
    Set<ConfigKey> matching(String namespace, Map<String, String> labels) {
        Set<ConfigKey> out = new HashSet<>(matchAll.getOrDefault(namespace, Set.of()));
        for (Map.Entry<String, String> l : labels.entrySet()) {
            for (ConfigKey se : byPair.getOrDefault(new Pair(namespace, l.getKey(), l.getValue()), Set.of())) {
                if (LabelSelector.subsetOf(selectors.get(se), labels)) {
                    out.add(se);
                }
            }
        }
        return out;
    }
}
