package io.meshpilot.security;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.meshpilot.bootstrap.MeshPilotServer;
import io.meshpilot.testing.TestServers;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Requests around gRPC's 4 MiB message limit on both transports: under it the call is
 * answered as any other; over it grpc-java answers RESOURCE_EXHAUSTED, while Helidon 4.4
 * cancels the call without a status (the caller's deadline ends it). Either way the server
 * keeps serving the same connection.
 */
class OversizedRequestTest {
    @ParameterizedTest
    @ValueSource(strings = {"helidon", "netty"})
    void messagesOverTheLimitAreRefusedAndTheConnectionKeepsWorking(String transport, @TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("config"));
        try (MeshPilotServer server = TestServers.start(dir, Map.of(), "--grpcTransport", transport)) {
            var root = server.server().components().certificates().material().root();
            ManagedChannel ch = CaClient.channel(server.ports().get("grpc-secure"), List.of(root), null, null);
            try {
                Object under = CaClient.create(ch, null, CaClient.request("x".repeat(3 * 1024 * 1024), 0));
                assertEquals(Status.Code.UNAUTHENTICATED, CaClient.code(under), String.valueOf(under));

                Object over = CaClient.create(ch, null, CaClient.request("x".repeat(5 * 1024 * 1024), 0),
                        Duration.ofSeconds(3));
                assertEquals(transport.equals("netty") ? Status.Code.RESOURCE_EXHAUSTED : Status.Code.DEADLINE_EXCEEDED,
                        CaClient.code(over), String.valueOf(over));

                Object after = CaClient.create(ch, null, CaClient.request("", 0));
                assertEquals(Status.Code.UNAUTHENTICATED, CaClient.code(after), "still served: " + after);
            } finally {
                ch.shutdownNow();
            }
        }
    }
}
