package io.meshpilot.grpc;

import io.helidon.webserver.grpc.GrpcConnectionContext;
import java.io.IOException;
import java.lang.reflect.Field;
import java.net.StandardSocketOptions;
import java.nio.channels.SocketChannel;
import java.time.Duration;

/**
 * The socket under a Helidon gRPC call. Helidon 4.4's HTTP/2 server sends no pings and, when
 * a connection ends, closes its socket without cancelling the calls on it; a stream of a
 * killed proxy would otherwise live until we next write to it. Helidon exposes no socket, so
 * this reaches it through two private fields (the connection context the gRPC context wraps,
 * and that context's channel); a test kills a client process and checks the streams go, so a
 * Helidon upgrade that moves them fails the build rather than the mesh.
 *
 * <p>On each socket it turns on TCP keepalive with the timings of istiod's --keepalive*
 * flags (probes after {@code interval} idle, the connection reset after about
 * {@code interval + timeout}), so the kernel also closes connections to peers that vanished
 * without a FIN. At a connection's first call it also gives a plaintext connection whole
 * socket writes ({@link DirectWriteSocket}), through the connection's writer (a third field).
 */
final class HelidonConnections {
    private static final System.Logger LOG = System.getLogger(HelidonConnections.class.getName());
    private static final Field CONTEXT;
    private static final Field CHANNEL;
    private static final Field WRITER;
    /** One lock per socket: writes to the streams of one connection go one at a time. */
    private static final java.util.Map<SocketChannel, Object> WRITE_LOCKS = new java.util.concurrent.ConcurrentHashMap<>();
    private static final int PRUNE_FROM = 1024;
    /** Size of {@link #WRITE_LOCKS} above which closed connections are swept (a sweep walks them all). */
    private static final java.util.concurrent.atomic.AtomicInteger PRUNE_AT =
            new java.util.concurrent.atomic.AtomicInteger(PRUNE_FROM);

    static {
        Field context = null;
        Field channel = null;
        Field writer = null;
        try {
            context = Class.forName("io.helidon.webserver.grpc.GrpcConnectionContextImpl")
                    .getDeclaredField("connectionContext");
            context.setAccessible(true);
            channel = Class.forName("io.helidon.webserver.ConnectionHandler").getDeclaredField("socket");
            channel.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "cannot reach Helidon's sockets (" + e
                    + "): streams of dead peers are noticed only when written to");
            context = null;
            channel = null;
        }
        try {
            writer = Class.forName("io.helidon.webserver.ConnectionHandler").getDeclaredField("writer");
            writer.setAccessible(true);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, "Helidon's socket writes stay as they are (" + e + ")");
            writer = null;
        }
        CONTEXT = context;
        CHANNEL = channel;
        WRITER = writer;
    }

    private HelidonConnections() {
    }

    /** The connection under {@code call}, with TCP keepalive applied; unwatched if it cannot be reached. */
    static TransportConnection of(GrpcConnectionContext call, Duration interval, Duration timeout) {
        Object connection = connection(call);
        SocketChannel channel = channel(connection);
        if (channel == null) {
            return TransportConnection.UNWATCHED;
        }
        Object writeLock = WRITE_LOCKS.computeIfAbsent(channel, c -> {
            // once per connection, at its first call
            keepalive(c, interval, timeout);
            directWrites(connection, c);
            return new Object();
        });
        int size = WRITE_LOCKS.size();
        int at = PRUNE_AT.get();
        if (size > at && PRUNE_AT.compareAndSet(at, Integer.MAX_VALUE)) {
            // closed connections' entries go; the next sweep waits until the map doubles
            WRITE_LOCKS.keySet().removeIf(c -> !c.isOpen());
            PRUNE_AT.set(Math.max(PRUNE_FROM, 2 * WRITE_LOCKS.size()));
        }
        return new TransportConnection() {
            @Override
            public void write(Runnable write) {
                synchronized (writeLock) {
                    write.run();
                }
            }

            @Override
            public boolean open() {
                return channel.isOpen();
            }

            @Override
            public void abort() {
                try {
                    channel.close(); // Helidon's reader fails and ends the connection
                } catch (IOException e) {
                    // already closed
                }
            }
        };
    }

    /** Helidon's connection (its ConnectionHandler) under a call, or null. */
    private static Object connection(GrpcConnectionContext call) {
        if (CONTEXT == null || call == null) {
            return null;
        }
        try {
            Object connection = CONTEXT.get(call);
            return connection != null && CHANNEL.getDeclaringClass().isInstance(connection) ? connection : null;
        } catch (IllegalAccessException | IllegalArgumentException e) {
            return null;
        }
    }

    private static SocketChannel channel(Object connection) {
        if (connection == null) {
            return null;
        }
        try {
            return CHANNEL.get(connection) instanceof SocketChannel c ? c : null;
        } catch (IllegalAccessException | IllegalArgumentException e) {
            return null;
        }
    }

    /** See {@link DirectWriteSocket}: plaintext connections write each frame in one system call. */
    private static void directWrites(Object connection, SocketChannel channel) {
        if (WRITER == null) {
            return;
        }
        try {
            DirectWriteSocket.install(WRITER.get(connection), channel);
        } catch (IllegalAccessException | IllegalArgumentException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "Helidon's socket writes stay as they are: " + e);
        }
    }

    private static void keepalive(SocketChannel channel, Duration interval, Duration timeout) {
        try {
            channel.setOption(StandardSocketOptions.SO_KEEPALIVE, true);
            int idle = (int) Math.max(1, interval.toSeconds());
            int probes = 2;
            int between = (int) Math.max(1, timeout.toSeconds() / probes);
            channel.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPIDLE, idle);
            channel.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPINTERVAL, between);
            channel.setOption(jdk.net.ExtendedSocketOptions.TCP_KEEPCOUNT, probes);
        } catch (IOException | UnsupportedOperationException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "TCP keepalive not applied: " + e);
        }
    }
}
