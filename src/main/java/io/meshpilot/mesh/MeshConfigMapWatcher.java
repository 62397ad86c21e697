package io.meshpilot.mesh;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.kube.KubeClient;
import io.meshpilot.model.Environment;
import java.lang.System.Logger.Level;
import java.util.Map;

/**
 * The mesh config from the cluster (istiod's kubemesh ConfigMap watcher), used in Kubernetes
 * mode when no --meshConfig file exists: the {@code mesh} and {@code meshNetworks} keys of the
 * ConfigMap {@code istio} (or {@code istio-<revision>}) in istiod's namespace, watched. A
 * change that does not load is logged with why and the previous config stays in force; a
 * missing ConfigMap (or key) means Istio's defaults.
 */
public final class MeshConfigMapWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MeshConfigMapWatcher.class.getName());
    public static final String MESH_KEY = "mesh";
    public static final String NETWORKS_KEY = "meshNetworks";

    private final Environment environment;
    private final KubeClient client;
    private final String namespace;
    private final String name;
    private final MeshConfigLoader loader = new MeshConfigLoader();
    private final String informerName;
    private volatile MeshConfigException lastRejection;
    /** The last texts applied, so an unchanged key is not reloaded. */
    private String meshText;
    private String networksText;

    public MeshConfigMapWatcher(Environment environment, KubeClient client, String namespace, String revision) {
        this.environment = environment;
        this.client = client;
        this.namespace = namespace;
        this.name = configMapName(revision);
        this.informerName = "configmap " + namespace + "/" + name;
    }

    /** istiod's naming: {@code istio}, or {@code istio-<rev>} for a revision other than default. */
    public static String configMapName(String revision) {
        return revision == null || revision.isBlank() || revision.equals("default") ? "istio" : "istio-" + revision;
    }

    /**
     * Registers the ConfigMap's informer (it runs with the client's informers); until it has
     * listed, the mesh config is Istio's defaults. Returns what the start-up log says.
     */
    public String start() {
        client.watchConfigMap(namespace, name, (data, deleted) -> {
            if (deleted) {
                LOG.log(Level.WARNING, "mesh ConfigMap " + namespace + "/" + name + " deleted: Istio's defaults apply");
            }
            apply(data);
        });
        return "meshConfig=ConfigMap " + namespace + "/" + name + " (keys " + MESH_KEY + ", " + NETWORKS_KEY
                + "; defaults until listed)";
    }

    private synchronized void apply(Map<String, String> data) {
        Map<String, String> d = data == null ? Map.of() : data;
        String mesh = d.getOrDefault(MESH_KEY, "");
        String networks = d.getOrDefault(NETWORKS_KEY, "");
        String source = "ConfigMap " + namespace + "/" + name;
        try {
            if (!mesh.equals(meshText)) {
                MeshConfig next = mesh.isBlank() ? loader.defaults() : loader.parseMesh(source + " key " + MESH_KEY, mesh);
                environment.setMesh(next);
                meshText = mesh;
                LOG.log(Level.INFO, "mesh config loaded from " + source);
            }
            if (!networks.equals(networksText)) {
                MeshNetworks next = networks.isBlank() ? MeshNetworks.getDefaultInstance()
                        : loader.parseNetworks(source + " key " + NETWORKS_KEY, networks);
                environment.setNetworks(next);
                networksText = networks;
                LOG.log(Level.INFO, "mesh networks loaded from " + source + " networks=" + next.getNetworksCount());
            }
            lastRejection = null;
        } catch (MeshConfigException e) {
            lastRejection = e;
            LOG.log(Level.ERROR, "rejected mesh config change in " + source + ", keeping the previous one: "
                    + e.getMessage());
        }
    }

    /** The last rejected change, null once a later change applied. */
    public MeshConfigException lastRejection() {
        return lastRejection;
    }

    @Override
    public void close() {
        client.removeInformer(informerName);
    }
}
