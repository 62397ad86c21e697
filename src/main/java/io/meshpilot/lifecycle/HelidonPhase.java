package io.meshpilot.lifecycle;

/**
 * CDI observer priorities around the moment Helidon MP binds its sockets (priority 4100 of
 * {@code @Initialized(ApplicationScoped.class)}): the only start-up steps that must run
 * inside the container. Every other step is ordered by the wiring class, not by priorities.
 */
public final class HelidonPhase {
    /** Routings and filters are handed to Helidon here, just before it binds. */
    public static final int BEFORE_BIND = 4050;
    /** Helidon binds its sockets. */
    public static final int BIND = 4100;
    /** Ports are known. */
    public static final int AFTER_BIND = 4200;

    private HelidonPhase() {
    }
}
