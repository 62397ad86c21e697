package io.meshpilot.grpc;

import io.grpc.KnownLength;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;

/**
 * A test-only gRPC service, registered before the server listens as a real component does, that answers with what
 * {@link CallPeer#current()} says about the caller. Lets tests check the peer seam on both
 * transports without a generated stub.
 */
public final class PeerEchoService {
    public static final MethodDescriptor<String, String> WHO = unary("Who");
    /** Answers a string of as many 'x' as the request's decimal number: a response of a chosen size. */
    public static final MethodDescriptor<String, String> PAD = unary("Pad");

    private PeerEchoService() {
    }

    /** Adds the service to a server's gRPC services (before it listens). */
    public static void register(GrpcServices services) {
        services.register(() -> ServerServiceDefinition.builder("meshpilot.test.PeerEcho")
                .addMethod(WHO, ServerCalls.asyncUnaryCall((req, out) -> {
                    String answer = CallPeer.current().map(p -> p.listener() + "|secure=" + p.secure()
                            + "|certs=" + p.certificates().size()
                            + (p.certificates().isEmpty() ? "" : "|" + p.certificates().get(0).getSubjectX500Principal().getName())
                            + "|remote=" + p.remoteAddress()).orElse("no peer");
                    out.onNext(answer);
                    out.onCompleted();
                }))
                .addMethod(PAD, ServerCalls.asyncUnaryCall((req, out) -> {
                    // "N" or "N:c": N times x, or N times c
                    String[] n = req.split(":", 2);
                    out.onNext((n.length == 2 ? n[1] : "x").repeat(Integer.parseInt(n[0])));
                    out.onCompleted();
                }))
                .build(), GrpcServices.Ports.PLAINTEXT_AND_SECURE);
    }

    private static MethodDescriptor<String, String> unary(String method) {
        return MethodDescriptor.<String, String>newBuilder()
                .setType(MethodDescriptor.MethodType.UNARY)
                .setFullMethodName("meshpilot.test.PeerEcho/" + method)
                .setRequestMarshaller(new Utf8())
                .setResponseMarshaller(new Utf8())
                .build();
    }

    /** UTF-8 string marshaller. */
    static final class Utf8 implements MethodDescriptor.Marshaller<String> {
        @Override
        public InputStream stream(String value) {
            return new Sized(value.getBytes(StandardCharsets.UTF_8));
        }

        /** Sized up front, as protobuf's messages (and the xDS responses) are: the transports' usual path. */
        private static final class Sized extends ByteArrayInputStream implements KnownLength {
            Sized(byte[] bytes) {
                super(bytes);
            }
        }

        @Override
        public String parse(InputStream stream) {
            try {
                // Helidon's gRPC stream never signals end-of-stream to readAllBytes(); like
                // protobuf's marshaller, trust the length of a KnownLength stream.
                if (stream instanceof KnownLength) {
                    return new String(stream.readNBytes(stream.available()), StandardCharsets.UTF_8);
                }
                return new String(stream.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
