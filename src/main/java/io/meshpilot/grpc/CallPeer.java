package io.meshpilot.grpc;

import io.grpc.Context;
import io.grpc.Metadata;
import java.net.SocketAddress;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Who is on the other end of a gRPC call, the same on either transport: the listener it came
 * in on, its address, and its verified TLS certificate chain (empty on plaintext or when the
 * client sent none). Services read it with {@link #current()}; the authenticators build
 * identities from it. The HTTP debug endpoints describe their callers with it too, on the
 * listener {@link #HTTP}.
 */
public record CallPeer(String listener, SocketAddress remoteAddress, List<X509Certificate> certificates,
                       boolean secure) {
    static final Context.Key<CallPeer> KEY = Context.key("meshpilot.call-peer");
    static final Context.Key<Metadata> HEADERS = Context.key("meshpilot.call-headers");
    /** The listener of every caller of an HTTP endpoint. */
    public static final String HTTP = "http";

    public CallPeer {
        certificates = List.copyOf(certificates);
    }

    /** The peer of the call running on this thread, if it came through our transports. */
    public static Optional<CallPeer> current() {
        return Optional.ofNullable(KEY.get());
    }

    /** The request headers of the call running on this thread (token authenticators read them). */
    public static CallHeaders currentHeaders() {
        Metadata md = HEADERS.get();
        return name -> {
            Iterable<String> values = md == null ? null : md.getAll(Metadata.Key.of(name, Metadata.ASCII_STRING_MARSHALLER));
            List<String> all = new ArrayList<>();
            if (values != null) {
                values.forEach(all::add);
            }
            return all;
        };
    }

    /** Whether the caller called an HTTP endpoint rather than a gRPC service. */
    public boolean http() {
        return listener.equals(HTTP);
    }
}
