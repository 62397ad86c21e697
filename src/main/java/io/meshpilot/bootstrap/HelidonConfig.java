package io.meshpilot.bootstrap;

import io.meshpilot.features.GrpcTransportKind;
import io.meshpilot.features.HttpLimits;
import io.meshpilot.features.ListenAddress;
import io.meshpilot.features.ListenerNames;
import io.meshpilot.features.Listeners;
import io.meshpilot.security.ServingCertificate;
import java.util.HashMap;
import java.util.Map;

/**
 * Translates our flags into Helidon MP config: the default socket for --httpAddr, named
 * sockets "grpc", "grpc-secure" (TLS), "monitoring" and "webhook" (TLS) for the others. A
 * listener whose flag is empty gets no socket; its content moves to the http socket.
 */
final class HelidonConfig {
    /** Above MP's system properties (400): the flags decide. */
    static final String ORDINAL = "1000";
    static final String SHUTDOWN_GRACE = "PT0.1S";

    private HelidonConfig() {
    }

    /** grpc-java's default maximum inbound message size. */
    static final int GRPC_MAX_MESSAGE = 4 * 1024 * 1024;

    static Map<String, String> fromArgs(PilotArgs args, ServingCertificate cert) {
        Map<String, String> c = new HashMap<>();
        c.put("config_ordinal", ORDINAL);
        Listeners l = args.listeners();
        c.put("server.host", l.http().host());
        c.put("server.port", Integer.toString(l.http().port()));
        // Our shutdown has drained already (--shutdownDuration); Helidon's own per-listener
        // grace (0.5 s each, one listener after another) would only add to it.
        c.put("server.shutdown-grace-period", SHUTDOWN_GRACE);
        // Helidon leaves Nagle on; with the peer's delayed ACKs a small unary response (a CSR
        // answer) then waits ~40 ms. Go's servers, istiod's included, set TCP_NODELAY.
        c.put("server.connection-options.tcp-no-delay", "true");
        httpLimits(c, "server.");
        // Helidon 4.4.0's NIO socket corrupts or stalls large responses (Helidon issues 11340
        // and 11353, fixed after 4.4.0); its plain socket path sends them whole. The plaintext
        // listeners and the webhook listener use it; Helidon's secure gRPC socket keeps NIO,
        // because 4.4.0's plain TLS socket never asks for a client certificate (it ignores the
        // listener's client-auth setting).
        c.put("server.use-nio", "false");
        // With several JAX-RS applications (http and monitoring), Helidon MP 4.4 (4.5 alike)
        // gives them one shared HK2 injection manager and shuts it down with the first; the
        // second application's shutdown then fails and Helidon logs a WARN on every stop. We
        // want an injection manager per application, which shuts down cleanly (the shared one
        // would only carry ParamConverterProviders across applications, and ours declare none).
        // Despite its name, single-injection-manager=true is that setting: ServerCdiExtension
        // creates the shared manager only when it is false and there is more than one application.
        c.put("server.single-injection-manager", "true");
        int i = 0;
        if (args.grpcTransport() == GrpcTransportKind.HELIDON) {
            if (l.grpc() != null) {
                grpcSocket(c, i++, ListenerNames.GRPC, l.grpc(), null);
            }
            if (l.secureGrpc() != null) {
                grpcSocket(c, i++, ListenerNames.GRPC_SECURE, l.secureGrpc(), cert);
            }
        }
        if (l.monitoring() != null) {
            httpLimits(c, socket(c, i++, ListenerNames.MONITORING, l.monitoring(), null));
        }
        if (l.https() != null) {
            String webhook = socket(c, i, ListenerNames.WEBHOOK, l.https(), cert);
            httpLimits(c, webhook);
            // Helidon 4.4.0's TLS NIO socket is not safe for HTTP/2's concurrent writers: a
            // response racing the connection's other TLS writes fails with "newPosition > limit"
            // (a quarter of new connections from curl; fixed in 4.5.0, whose MP modules are not
            // available here). The plain TLS socket (the JDK's SSLSocket) has no such race; its
            // want of client-auth costs nothing here, as the webhooks authenticate no client.
            c.put(webhook + "use-nio", "false");
        }
        // Observe endpoints go on every listener Helidon gives them; AdminAccess then keeps
        // /metrics to monitoring (istiod's 15014) and /health to http (8080).
        c.put("server.features.observe.sockets.0", ListenerNames.HTTP);
        if (l.monitoring() != null) {
            c.put("server.features.observe.sockets.1", ListenerNames.MONITORING);
        }
        return c;
    }

    /**
     * A gRPC socket (--grpcTransport helidon): an xDS stream may rightly see no traffic for
     * hours, and Helidon's idle close (5 minutes without a request by default) would cut it.
     */
    private static void grpcSocket(Map<String, String> c, int index, String name, ListenAddress address,
                                   ServingCertificate cert) {
        socket(c, index, name, address, cert);
        c.put("server.sockets." + index + ".idle-connection-timeout", "PT8760H");
        // grpc-java's inbound limit (4 MiB) instead of Helidon's 2 MiB, so both transports take
        // the same messages; above it Helidon 4.4 cancels the call without sending a status
        c.put("server.sockets." + index + ".protocols.grpc.max-read-buffer-size", Integer.toString(GRPC_MAX_MESSAGE));
        // Response compression is left at Helidon's default: every response to a client that
        // accepts gzip is gzipped (grpc-java's clients do; Envoy does not, and istiod never
        // compresses). Turned off, the load tool's grpc-java clients (100 streams per
        // connection, responses of 300-700 KB) received malformed HTTP/2 frames from Helidon
        // 4.4 (docs/PERFORMANCE.md). An uncompressed call keeps its largest response
        // (README, Helidon's limits).
    }

    /**
     * Limits of the HTTP listeners (not the gRPC ones, whose messages grpc limits): a body
     * declared (Content-Length) or streamed (chunked) past {@link HttpLimits#MAX_REQUEST_BODY}
     * is answered 413 by Helidon's HTTP/1 before it is read; request lines past
     * {@link HttpLimits#MAX_REQUEST_LINE} get 414.
     */
    private static void httpLimits(Map<String, String> c, String prefix) {
        c.put(prefix + "max-payload-size", Long.toString(HttpLimits.MAX_REQUEST_BODY));
        c.put(prefix + "protocols.http_1_1.max-prologue-length", Integer.toString(HttpLimits.MAX_REQUEST_LINE));
    }

    /** Returns the socket's config prefix. */
    private static String socket(Map<String, String> c, int index, String name, ListenAddress address,
                                 ServingCertificate cert) {
        String p = "server.sockets." + index + ".";
        c.put(p + "name", name);
        c.put(p + "host", address.host());
        c.put(p + "port", Integer.toString(address.port()));
        c.put(p + "shutdown-grace-period", SHUTDOWN_GRACE);
        c.put(p + "connection-options.tcp-no-delay", "true");
        if (cert == null) {
            c.put(p + "use-nio", "false");
        } else {
            // PEM text in the (in-memory) config: the key never touches the disk
            c.put(p + "tls.private-key.pem.key.resource.content-plain", cert.keyPem());
            c.put(p + "tls.private-key.pem.cert-chain.resource.content-plain", cert.chainPem());
            c.put(p + "tls.trust.pem.certificates.resource.content-plain", cert.trustPem());
            c.put(p + "tls.client-auth", "OPTIONAL");
            c.put(p + "tls.endpoint-identification-algorithm", "NONE");
        }
        return p;
    }
}
