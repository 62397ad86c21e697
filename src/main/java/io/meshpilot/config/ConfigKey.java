package io.meshpilot.config;

/**
 * Identity of one config object: kind, namespace, name (istiod's ConfigKey). What push
 * requests name as "configs updated" and what logs print as {@code Kind/namespace/name}.
 */
public record ConfigKey(String kind, String namespace, String name) implements Comparable<ConfigKey> {

    @Override
    public String toString() {
        return kind + "/" + namespace + "/" + name;
    }

    @Override
    public int compareTo(ConfigKey o) {
        int c = kind.compareTo(o.kind);
        if (c == 0) {
            c = namespace.compareTo(o.namespace);
        }
        return c != 0 ? c : name.compareTo(o.name);
    }
}
