package io.meshpilot.lifecycle;

/** The components of DESIGN section 3, in start-up order. */
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
