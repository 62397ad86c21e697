package io.meshpilot.bootstrap;

import io.meshpilot.security.CaSetup;
import java.util.concurrent.atomic.AtomicReference;

/**
 * What exists before the CDI container does: the parsed args and the TLS material the
 * sockets are configured with (Helidon reads socket TLS when the container starts, before
 * any bean runs). {@link MeshPilotServer} installs it; {@link BootstrapProducers} hands it
 * to beans. One server per JVM, as Helidon MP allows.
 *
 * @param ca         the CA and the serving certificate it issued (component 4, made before the container)
 */
public record BootstrapContext(PilotArgs args, CaSetup ca) {
    private static final AtomicReference<BootstrapContext> CURRENT = new AtomicReference<>();

    static void install(BootstrapContext ctx) {
        CURRENT.set(ctx);
    }

    static void clear() {
        CURRENT.set(null);
    }

    public static BootstrapContext current() {
        BootstrapContext ctx = CURRENT.get();
        if (ctx == null) {
            throw new IllegalStateException("MeshPilot was not started through MeshPilotServer");
        }
        return ctx;
    }
}
