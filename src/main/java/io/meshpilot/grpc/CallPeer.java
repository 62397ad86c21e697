package io.meshpilot.grpc;

import io.grpc.Context;
import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.util.List;
import java.util.Optional;

/**
 * Who is on the other end of a gRPC call, the same on either transport: the listener it came
 * in on, its address, and its verified TLS certificate chain (empty on plaintext or when the
 * client sent none). Services read it with {@link #current()}; the authenticators build
 * identities from it.
 */
public record CallPeer(String listener, SocketAddress remoteAddress, List<X509Certificate> certificates,
                       boolean secure) {
    static final Context.Key<CallPeer> KEY = Context.key("meshpilot.call-peer");
    static final Context.Key<io.grpc.Metadata> HEADERS = Context.key("meshpilot.call-headers");

    public CallPeer {
        certificates = List.copyOf(certificates);
    }

    /** The peer of the call running on this thread, if it came through our transports. */
    public static Optional<CallPeer> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** The request headers of the call running on this thread (token authenticators read them). */
    public static java.util.function.Function<String, String> currentHeaders() {
        io.grpc.Metadata md = HEADERS.get();
        return name -> md == null ? null : md.get(io.grpc.Metadata.Key.of(name, io.grpc.Metadata.ASCII_STRING_MARSHALLER));
    }
}
