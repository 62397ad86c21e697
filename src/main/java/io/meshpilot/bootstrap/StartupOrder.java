package io.meshpilot.bootstrap;

/**
 * CDI observer priorities of the start-up order (DESIGN section 3). Lower runs first.
 * Helidon binds its sockets at {@link #HELIDON_BINDS} (PLATFORM_AFTER + 100), so everything
 * that must exist before traffic arrives sits below it.
 */
public final class StartupOrder {
    public static final int ARGS = 2000;
    public static final int ENVIRONMENT = 2100;
    public static final int MESH_WATCHERS = 2200;
    public static final int CA = 2300;
    public static final int CONFIG_STORES = 2400;
    public static final int SERVICE_REGISTRIES = 2500;
    public static final int DISCOVERY_SERVER = 2600;
    /** Our gRPC routings are handed to Helidon (or Netty servers bound) just before Helidon binds. */
    public static final int SERVERS_PREPARE = 4050;
    public static final int HELIDON_BINDS = 4100;
    /** After Helidon bound: ports are known. */
    public static final int SERVERS_BOUND = 4200;
    public static final int START_FUNCTIONS = 4300;

    private StartupOrder() {
    }
}
