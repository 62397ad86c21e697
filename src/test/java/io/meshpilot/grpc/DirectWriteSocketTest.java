package io.meshpilot.grpc;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.helidon.common.buffers.BufferData;
import io.helidon.common.socket.NioSocket;
import io.helidon.common.socket.SocketWriter;
import java.io.ByteArrayOutputStream;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Helidon's own socket writer, given whole writes, over a real loopback connection. */
class DirectWriteSocketTest {

    @Test
    void helidonsWriterSendsEveryByteInOrderThroughTheInstalledSocket() throws Exception {
        try (ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
             SocketChannel client = SocketChannel.open(listener.getLocalAddress());
             SocketChannel accepted = listener.accept()) {
            NioSocket helidon = NioSocket.server(accepted, "1", "test");
            SocketWriter writer = SocketWriter.create(helidon);
            long before = DirectWriteSocket.installed();
            assertTrue(DirectWriteSocket.install(writer, accepted));
            assertTrue(DirectWriteSocket.install(writer, accepted), "installing again keeps it");
            assertEquals(1, DirectWriteSocket.installed() - before);
            assertFalse(DirectWriteSocket.install(new Object(), accepted), "not a Helidon writer");

            byte[] header = {0, 64, 0, 0, 1, 0, 0, 0, 1};
            byte[] frame = new byte[16_384];
            byte[] large = new byte[3 * DirectWriteSocket.CHUNK + 1_000]; // goes out in pieces
            new Random(7).nextBytes(frame);
            new Random(8).nextBytes(large);
            ByteArrayOutputStream expected = new ByteArrayOutputStream();
            expected.write(header);
            expected.write(frame);
            expected.write(large);
            expected.write(frame, 0, 5);
            int total = expected.size();

            CompletableFuture<byte[]> received = CompletableFuture.supplyAsync(() -> {
                try {
                    ByteBuffer all = ByteBuffer.allocate(total);
                    while (all.hasRemaining() && client.read(all) >= 0) {
                        // read until everything arrived
                    }
                    return all.array();
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            // as Helidon's HTTP/2 writer sends a frame: its header and a copy of its data, one composite
            writer.writeNow(BufferData.create(BufferData.create(header), BufferData.create(frame)));
            writer.writeNow(BufferData.create(large));
            writer.write(BufferData.create(frame, 0, 5));
            assertArrayEquals(expected.toByteArray(), received.get(30, TimeUnit.SECONDS));
        }
    }
}
