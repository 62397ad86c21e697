package io.meshpilot.config.protocol;

import java.util.Locale;

/**
 * Service port protocols as istiod classifies them (pkg/config/protocol): from an explicit
 * protocol, an appProtocol, or a port-name prefix ({@code http-web}, {@code grpc},
 * {@code tcp-db}). Unknown names are UNSUPPORTED, which istiod treats as "sniff".
 */
public enum Protocol {
    HTTP, HTTP2, HTTPS, GRPC, GRPC_WEB, TCP, TLS, MONGO, REDIS, MYSQL, UDP, THRIFT, HTTP_PROXY, UNSUPPORTED;

    /** istiod's protocol.Parse: case-insensitive name. */
    public static Protocol parse(String s) {
        if (s == null) {
            return UNSUPPORTED;
        }
        return switch (s.toLowerCase(Locale.ROOT)) {
            case "http" -> HTTP;
            case "http2" -> HTTP2;
            case "https" -> HTTPS;
            case "grpc" -> GRPC;
            case "grpc-web" -> GRPC_WEB;
            case "tcp" -> TCP;
            case "tls" -> TLS;
            case "mongo" -> MONGO;
            case "redis" -> REDIS;
            case "mysql" -> MYSQL;
            case "udp" -> UDP;
            case "thrift" -> THRIFT;
            case "http_proxy" -> HTTP_PROXY;
            default -> UNSUPPORTED;
        };
    }

    /** From a port name: the part before the first '-' ("http-web" is HTTP, "grpc" is GRPC). */
    public static Protocol fromPortName(String name) {
        if (name == null || name.isEmpty()) {
            return UNSUPPORTED;
        }
        int dash = name.indexOf('-');
        Protocol p = parse(dash < 0 ? name : name.substring(0, dash));
        // "grpc-web" is itself a protocol name, not "grpc" plus a suffix
        return name.toLowerCase(Locale.ROOT).startsWith("grpc-web") ? GRPC_WEB : p;
    }

    /** appProtocol wins over the name, as in Kubernetes Services; explicit protocol wins over both. */
    public static Protocol of(String explicit, String appProtocol, String portName) {
        if (explicit != null && !explicit.isEmpty()) {
            return parse(explicit);
        }
        if (appProtocol != null && !appProtocol.isEmpty()) {
            Protocol p = parse(appProtocol);
            if (p != UNSUPPORTED) {
                return p;
            }
        }
        return fromPortName(portName);
    }

    public boolean isHttp() {
        return this == HTTP || this == HTTP2 || this == GRPC || this == GRPC_WEB || this == HTTP_PROXY;
    }

    /** istiod's IsTLS: protocols whose traffic is TLS on the wire. */
    public boolean isTls() {
        return this == HTTPS || this == TLS;
    }

    /** istiod's IsTCP: protocols proxied as opaque TCP streams. */
    public boolean isTcp() {
        return this == TCP || this == HTTPS || this == TLS || this == MONGO || this == REDIS || this == MYSQL;
    }

    /** The name istiod prints (HTTP, GRPC-Web, ...). */
    public String label() {
        return switch (this) {
            case GRPC_WEB -> "GRPC-Web";
            case UNSUPPORTED -> "UnsupportedProtocol";
            default -> name();
        };
    }
}
