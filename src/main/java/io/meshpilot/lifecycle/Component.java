package io.meshpilot.lifecycle;

/** The components istiod's NewServer() builds, in start-up order (docs/ARCHITECTURE.md). */
public enum Component {
    ARGS("args"),
    ENVIRONMENT("environment"),
    KUBE_CLIENT("kube-client"),
    MESH_WATCHERS("mesh-watchers"),
    CA("ca"),
    CONFIG_STORES("config-stores"),
    SERVICE_REGISTRIES("service-registries"),
    DISCOVERY_SERVER("discovery-server"),
    SERVERS("servers"),
    START_FUNCTIONS("start-functions");

    private final String label;

    Component(String label) {
        this.label = label;
    }

    public String label() {
        return label;
    }
}
