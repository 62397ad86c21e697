package io.meshpilot.xds;

import io.grpc.Status;
import io.meshpilot.util.GoDuration;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * Every few seconds, ends each xDS stream on a transport without a connection-age limit of
 * its own (Helidon) that is older than the maximum connection age (plus up to 10% jitter, as
 * gRPC does) with UNAVAILABLE, so the proxy reconnects, possibly to another istiod. Helidon
 * 4.4 does not end the calls of a connection that closed abruptly, so this is also what ends
 * the streams of a vanished proxy there: with --keepaliveMaxServerConnectionAge infinite (its
 * default) such streams get {@link #HELIDON_DEFAULT_MAX_AGE}. Streams on Netty are left to
 * Netty, which ages its connections itself.
 */
final class ConnectionSweeper implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(ConnectionSweeper.class.getName());
    static final Duration PERIOD = Duration.ofSeconds(5);
    /** What istiod's Helm chart sets --keepaliveMaxServerConnectionAge to. */
    static final Duration HELIDON_DEFAULT_MAX_AGE = Duration.ofMinutes(30);

    private final ConnectionTable connections;
    private final Duration maxAge;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon().name("xds-sweep").unstarted(r));

    /**
     * @param configured --keepaliveMaxServerConnectionAge; when infinite, Helidon's streams are
     *                   ended at {@link #HELIDON_DEFAULT_MAX_AGE} (logged once as a WARNING)
     */
    ConnectionSweeper(ConnectionTable connections, Duration configured) {
        this.connections = connections;
        this.maxAge = configured.equals(GoDuration.INFINITE) ? HELIDON_DEFAULT_MAX_AGE : configured;
        if (configured.equals(GoDuration.INFINITE)) {
            LOG.log(Level.WARNING, "xDS streams on Helidon's gRPC listeners are ended after "
                    + GoDuration.format(maxAge) + " (plus up to 10% jitter) although --keepaliveMaxServerConnectionAge is"
                    + " infinite: Helidon does not end the calls of a connection that closed abruptly, so this age is"
                    + " what drops a vanished proxy's stream there; set --keepaliveMaxServerConnectionAge to change it");
        }
        timer.scheduleWithFixedDelay(this::sweep, PERIOD.toMillis(), PERIOD.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** The age past which (plus jitter) Helidon's streams are ended. */
    Duration maxAge() {
        return maxAge;
    }

    private void sweep() {
        sweep(Instant.now());
    }

    /** Ends the Helidon streams that are past their age at {@code now}. */
    void sweep(Instant now) {
        try {
            for (Connection c : connections.all()) {
                if (!c.transportLimitsConnectionAge() && c.connectedAt().plus(jittered(c)).isBefore(now)) {
                    LOG.log(Level.INFO, "xDS stream reached the maximum connection age, closing proxy="
                            + c.proxy().id() + " connection=" + c.id());
                    connections.disconnected(c);
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
