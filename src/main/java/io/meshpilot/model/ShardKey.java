package io.meshpilot.model;

/** Which registry and cluster a set of endpoints came from (istiod's ShardKey). */
public record ShardKey(String cluster, String provider) {
    @Override
    public String toString() {
        return provider + "/" + cluster;
    }
}
