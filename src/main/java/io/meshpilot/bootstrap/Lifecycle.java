package io.meshpilot.bootstrap;

import io.meshpilot.grpc.GrpcServices;
import jakarta.annotation.PostConstruct;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;

/**
 * Component 9 (start functions) and the way out: marks the server started, which turns the
 * "started" readiness probe and gRPC health SERVING on; on shutdown turns readiness 503 and
 * health NOT_SERVING, refuses new gRPC calls and waits for the running ones to finish, up to
 * --shutdownDuration.
 */
@ApplicationScoped
public class Lifecycle {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    @Inject
    Readiness readiness;

    @Inject
    GrpcServices grpcServices;

    @Inject
    StartupRecorder recorder;

    private volatile boolean started;
    private volatile boolean draining;
    private volatile Instant readyAt;

    @PostConstruct
    void probes() {
        readiness.register("started", () -> started);
        readiness.register("not-shutting-down", () -> !draining);
    }

    void start(@Observes @Priority(StartupOrder.START_FUNCTIONS) @Initialized(ApplicationScoped.class) Object event) {
        recorder.run(Component.START_FUNCTIONS, () -> {
            started = true;
            grpcServices.setServing(true);
            readyAt = Instant.now();
            return "readiness probes=" + readiness.probeNames();
        });
        LOG.log(Level.INFO, () -> "ready: started in " + Duration.between(recorder.createdAt(), readyAt).toMillis()
                + " ms since the container started");
    }

    public boolean started() {
        return started;
    }

    public boolean draining() {
        return draining;
    }

    public Instant readyAt() {
        return readyAt;
    }

    /**
     * Readiness off, health NOT_SERVING, no new gRPC calls; then waits for running calls to
     * end. Returns true when they all ended before the deadline.
     */
    public boolean drain(Duration timeout) throws InterruptedException {
        draining = true;
        grpcServices.setServing(false);
        grpcServices.activeCalls().startDraining();
        LOG.log(Level.INFO, "draining: readiness off, waiting up to " + timeout.toMillis() + " ms for "
                + grpcServices.activeCalls().active() + " gRPC call(s)");
        return grpcServices.activeCalls().awaitIdle(timeout);
    }
}
