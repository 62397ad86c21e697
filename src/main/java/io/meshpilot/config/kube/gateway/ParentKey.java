package io.meshpilot.config.kube.gateway;

/**
 * What a route's {@code parentRef} names (istiod's parentKey): a Gateway, a ListenerSet, a
 * Service (GAMMA) or the mesh.
 *
 * @param kind a Gateway API kind, {@code Service}, or {@link #MESH_KIND}
 */
public record ParentKey(String kind, String namespace, String name) {
    /** istiod's meshGVK kind: the parent of routes that apply to sidecars. */
    public static final String MESH_KIND = "Mesh";
    public static final ParentKey MESH = new ParentKey(MESH_KIND, "", "istio");

    @Override
    public String toString() {
        return kind + "/" + namespace + "/" + name;
    }
}
