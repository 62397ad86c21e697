package io.meshpilot.grpc;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.socket.HelidonSocket;
import io.helidon.common.socket.PeerInfo;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Deque;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * A plaintext Helidon connection's socket, with writes that go to the channel whole. Helidon
 * 4.4's {@code NioSocket} copies every write through an 8 KiB heap buffer, which the JDK copies
 * again into a direct one: a 16 KiB HTTP/2 frame (the largest Envoy and grpc-java accept) goes
 * out as three system calls and three TCP segments, 8192 + 8192 + 9 bytes. Those writes were
 * about 60% of the server's CPU while pushing EDS to 2,000 sidecars. Here a buffer goes out in
 * one write of up to {@link #CHUNK} bytes from a direct buffer: one system call, one segment
 * and one copy fewer per frame. The direct buffers are shared (borrowed for one write, at most
 * {@link #KEPT} kept), so their memory follows the writes in progress, not the connections.
 * Reads, peer information and closing stay Helidon's.
 *
 * <p>Installed by replacing the socket of the connection's Helidon {@code SocketWriter}, a
 * private final field (reflection, like {@link HelidonConnections}); when that cannot be done
 * the connection keeps Helidon's writes. Replacing it while the connection is in use is safe:
 * Helidon writes one buffer at a time per connection (its HTTP/2 writer holds a lock around
 * each), and either socket writes a buffer whole to the same blocking channel, so a writer
 * that still sees the old socket writes correctly too.
 */
final class DirectWriteSocket implements HelidonSocket {
    private static final System.Logger LOG = System.getLogger(DirectWriteSocket.class.getName());
    /** One frame and its header with room to spare; larger buffers go out in pieces of this size. */
    static final int CHUNK = 64 * 1024;
    /** Free buffers kept for the next writes; more are made while more writes are in progress. */
    static final int KEPT = 32;
    private static final Deque<ByteBuffer> FREE = new ConcurrentLinkedDeque<>();
    private static final AtomicInteger FREE_COUNT = new AtomicInteger();
    private static final Field WRITER_SOCKET = writerSocketField();
    private static final LongAdder INSTALLED = new LongAdder();

    private final HelidonSocket helidon;
    private final SocketChannel channel;

    private DirectWriteSocket(HelidonSocket helidon, SocketChannel channel) {
        this.helidon = helidon;
        this.channel = channel;
    }

    private static Field writerSocketField() {
        try {
            Field f = Class.forName("io.helidon.common.socket.SocketWriter").getDeclaredField("socket");
            if (f.getType() != HelidonSocket.class) {
                return null;
            }
            f.setAccessible(true);
            return f;
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, "Helidon's socket writes stay as they are (" + e + ")");
            return null;
        }
    }

    /**
     * Gives the connection of {@code writer} (Helidon's {@code SocketWriter}) whole writes, when
     * its socket is Helidon's plaintext one over {@code channel}; true if it now has them.
     */
    static boolean install(Object writer, SocketChannel channel) {
        if (WRITER_SOCKET == null || writer == null || !WRITER_SOCKET.getDeclaringClass().isInstance(writer)) {
            return false;
        }
        try {
            Object socket = WRITER_SOCKET.get(writer);
            if (socket instanceof DirectWriteSocket) {
                return true;
            }
            // only Helidon's plain NIO socket: a TLS socket must encrypt what it writes
            if (!(socket instanceof HelidonSocket s) || s.isSecure()
                    || !socket.getClass().getName().equals("io.helidon.common.socket.NioSocket")) {
                return false;
            }
            WRITER_SOCKET.set(writer, new DirectWriteSocket(s, channel));
            INSTALLED.increment();
            return true;
        } catch (IllegalAccessException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "Helidon's socket writes stay as they are for " + channel + ": " + e);
            return false;
        }
    }

    /** Connections given whole writes since start. */
    static long installed() {
        return INSTALLED.sum();
    }

    // Helidon writes one buffer at a time per connection (see above), so no lock here: a write
    // blocked on a slow reader would only pin its carrier thread
    @Override
    public void write(BufferData buffer) {
        ByteBuffer out = borrow();
        try {
            while (!buffer.consumed()) {
                out.clear();
                buffer.writeTo(out, buffer.available());
                out.flip();
                while (out.hasRemaining()) { // a virtual thread's write may return after part of it
                    channel.write(out);
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            giveBack(out);
        }
    }

    private static ByteBuffer borrow() {
        ByteBuffer b = FREE.pollFirst();
        if (b != null) {
            FREE_COUNT.decrementAndGet();
            return b;
        }
        try {
            return ByteBuffer.allocateDirect(CHUNK);
        } catch (OutOfMemoryError e) {
            return ByteBuffer.allocate(CHUNK); // no direct memory left: the JDK copies this one, as for Helidon's
        }
    }

    private static void giveBack(ByteBuffer b) {
        if (b.isDirect() && FREE_COUNT.incrementAndGet() <= KEPT) {
            FREE.offerFirst(b);
        } else if (b.isDirect()) {
            FREE_COUNT.decrementAndGet();
        }
    }

    @Override
    public void close() {
        helidon.close();
    }

    @Override
    public void idle() {
        helidon.idle();
    }

    @Override
    public boolean isConnected() {
        return helidon.isConnected();
    }

    @SuppressWarnings("removal")
    @Override
    public int read(BufferData buffer) {
        return helidon.read(buffer);
    }

    @Override
    public byte[] get() {
        return helidon.get();
    }

    @Override
    public boolean protocolNegotiated() {
        return helidon.protocolNegotiated();
    }

    @Override
    public String protocol() {
        return helidon.protocol();
    }

    @Override
    public PeerInfo remotePeer() {
        return helidon.remotePeer();
    }

    @Override
    public PeerInfo localPeer() {
        return helidon.localPeer();
    }

    @Override
    public boolean isSecure() {
        return helidon.isSecure();
    }

    @Override
    public String socketId() {
        return helidon.socketId();
    }

    @Override
    public String childSocketId() {
        return helidon.childSocketId();
    }
}
