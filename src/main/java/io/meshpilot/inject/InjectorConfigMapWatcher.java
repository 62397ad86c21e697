package io.meshpilot.inject;

import io.meshpilot.kube.KubeClient;
import java.lang.System.Logger.Level;
import java.util.Map;
import java.util.function.Supplier;

/**
 * The {@code istio-sidecar-injector} ConfigMap (or {@code istio-sidecar-injector-<revision>})
 * in istiod's namespace, watched: its {@code config} and {@code values} keys become the
 * injector's settings. A change that does not parse is logged with the key and the reason and
 * the previous settings stay; a missing ConfigMap means the chart's defaults.
 */
public final class InjectorConfigMapWatcher implements Supplier<SidecarInjector.Settings> {
    private static final System.Logger LOG = System.getLogger(InjectorConfigMapWatcher.class.getName());
    public static final String CONFIG_KEY = "config";
    public static final String VALUES_KEY = "values";

    private final KubeClient client;
    private final String namespace;
    private final String name;
    private volatile SidecarInjector.Settings current = SidecarInjector.Settings.defaults();
    private volatile String lastRejection;

    public InjectorConfigMapWatcher(KubeClient client, String namespace, String revision) {
        this.client = client;
        this.namespace = namespace;
        this.name = configMapName(revision);
    }

    /** istiod's naming: the revision's own ConfigMap for a revision other than default. */
    public static String configMapName(String revision) {
        return revision == null || revision.isBlank() || revision.equals("default") ? "istio-sidecar-injector"
                : "istio-sidecar-injector-" + revision;
    }

    /** Registers the informer (it runs with the client's informers); returns what the start-up log says. */
    public String start() {
        client.watchConfigMap(namespace, name, (data, deleted) -> {
            if (deleted) {
                LOG.log(Level.WARNING, "injector ConfigMap " + namespace + "/" + name + " deleted: chart defaults apply");
            }
            apply(data);
        });
        return "injector=ConfigMap " + namespace + "/" + name + " (keys " + CONFIG_KEY + ", " + VALUES_KEY + ")";
    }

    /** Applies the ConfigMap's data, or keeps the current settings when a key does not parse. */
    synchronized void apply(Map<String, String> data) {
        Map<String, String> d = data == null ? Map.of() : data;
        String where = "ConfigMap " + namespace + "/" + name + " key ";
        InjectorConfig config;
        InjectionValues values;
        try {
            config = InjectorConfig.parse(d.get(CONFIG_KEY));
        } catch (IllegalArgumentException e) {
            reject(where + CONFIG_KEY + ": " + e.getMessage());
            return;
        }
        try {
            values = InjectionValues.parse(d.get(VALUES_KEY));
        } catch (IllegalArgumentException e) {
            reject(where + VALUES_KEY + ": " + e.getMessage());
            return;
        }
        current = new SidecarInjector.Settings(config, values);
        lastRejection = null;
        LOG.log(Level.INFO, "injector settings loaded from ConfigMap " + namespace + "/" + name + ": policy "
                + config.policy() + ", templates " + config.templateNames() + ", default " + config.defaultTemplates());
    }

    private void reject(String why) {
        lastRejection = why;
        LOG.log(Level.ERROR, "rejected injector ConfigMap change, keeping the previous settings: " + why);
    }

    @Override
    public SidecarInjector.Settings get() {
        return current;
    }

    /** The last rejected change's reason, null once a later change applied. */
    public String lastRejection() {
        return lastRejection;
    }
}
