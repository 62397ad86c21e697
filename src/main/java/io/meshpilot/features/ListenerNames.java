package io.meshpilot.features;

/** Names of our listeners: Helidon socket names, log keys and /api/v1/server keys. */
public final class ListenerNames {
    /** Helidon's default socket; istiod's httpAddr (8080). */
    public static final String HTTP = "@default";
    public static final String GRPC = "grpc";
    public static final String GRPC_SECURE = "grpc-secure";
    public static final String MONITORING = "monitoring";
    public static final String WEBHOOK = "webhook";

    private ListenerNames() {
    }

    /** The user-facing name: "http" for Helidon's default socket. */
    public static String display(String socket) {
        return HTTP.equals(socket) ? "http" : socket;
    }
}
