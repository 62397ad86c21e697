package io.meshpilot.registry;

import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.ShardKey;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A real EndpointIndex behind the RegistryUpdates contract, recording what each update would
 * push: "eds-incremental host", "eds-full host", "svc host", "svcdelete host", "gateways",
 * "addresses key,key", "ambient-policies name,name" (sorted).
 */
public final class RecordingUpdates implements RegistryUpdates {
    public final EndpointIndex index = new EndpointIndex();
    public final List<String> pushes = new CopyOnWriteArrayList<>();
    /** Every waypoint an addresses update named as changed. */
    public final Set<String> waypointsChanged = ConcurrentHashMap.newKeySet();

    @Override
    public void edsUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        switch (index.update(shard, hostname, namespace, endpoints)) {
            case INCREMENTAL -> pushes.add("eds-incremental " + hostname);
            case FULL -> pushes.add("eds-full " + hostname);
            case NONE -> { }
        }
    }

    @Override
    public void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        index.update(shard, hostname, namespace, endpoints);
    }

    @Override
    public void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted) {
        if (deleted) {
            index.deleteShard(shard, hostname, namespace);
        }
        pushes.add((deleted ? "svcdelete " : "svc ") + hostname);
    }

    @Override
    public void networkGatewaysUpdate() {
        pushes.add("gateways");
    }

    @Override
    public void addressesUpdate(Set<String> keys, Set<String> waypoints) {
        pushes.add("addresses " + String.join(",", new TreeSet<>(keys)));
        waypointsChanged.addAll(waypoints);
    }

    @Override
    public void ambientPoliciesUpdate(Set<String> names) {
        pushes.add("ambient-policies " + String.join(",", new TreeSet<>(names)));
    }

    public List<String> take() {
        List<String> out = List.copyOf(pushes);
        pushes.clear();
        return out;
    }
}
