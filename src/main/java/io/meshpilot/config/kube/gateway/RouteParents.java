package io.meshpilot.config.kube.gateway;

import java.util.List;
import java.util.Map;

/**
 * The listeners routes may attach to, by parent (istiod's RouteParents index), as the Gateway
 * conversion found them: only Gateways of classes this controller serves are in it.
 */
public record RouteParents(Map<ParentKey, List<ParentListener>> listeners) {
    public static final RouteParents NONE = new RouteParents(Map.of());

    public RouteParents {
        listeners = Map.copyOf(listeners);
    }

    /** The listeners of {@code parent}; empty when it is not a parent this controller serves. */
    public List<ParentListener> of(ParentKey parent) {
        return listeners.getOrDefault(parent, List.of());
    }
}
