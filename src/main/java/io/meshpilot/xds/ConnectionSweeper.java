package io.meshpilot.xds;

import io.grpc.Status;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Every few seconds, when the transport has no connection-age limit of its own (Helidon),
 * ends each xDS stream older than --keepaliveMaxServerConnectionAge (plus up to 10% jitter,
 * as gRPC does) with UNAVAILABLE so the proxy reconnects, possibly to another istiod.
 */
final class ConnectionSweeper implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ConnectionSweeper.class.getName());
    static final Duration PERIOD = Duration.ofSeconds(5);

    private final DiscoveryServer server;
    private final Duration maxAge;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon().name("xds-sweep").unstarted(r));

    /** @param maxAge streams older than this are ended */
    ConnectionSweeper(DiscoveryServer server, Duration maxAge) {
        this.server = server;
        this.maxAge = maxAge;
        timer.scheduleWithFixedDelay(this::sweep, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    void sweep() {
        try {
            Instant now = Instant.now();
            for (Connection c : server.connections()) {
                if (c.connectedAt().plus(jittered(c)).isBefore(now)) {
                    LOG.log(Level.INFO, "xDS stream reached the maximum connection age, closing proxy="
                            + c.proxy().id() + " connection=" + c.id());
                    server.disconnected(c);
                    c.end(Status.UNAVAILABLE.withDescription("maximum connection age reached; reconnect"));
                }
            }
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "xDS connection sweep failed", e);
        }
    }

    /** The connection's age limit: the same jitter for a connection every time it is looked at. */
    private Duration jittered(Connection c) {
        double fraction = Math.floorMod(c.id().hashCode(), 1000) / 1000.0; // 0 to 0.999, fixed per connection
        return maxAge.plusMillis((long) (maxAge.toMillis() * 0.1 * fraction));
    }

    @Override
    public void close() {
        timer.shutdownNow();
    }
}
