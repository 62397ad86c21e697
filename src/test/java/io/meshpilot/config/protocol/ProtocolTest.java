package io.meshpilot.config.protocol;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** istiod's pkg/config/protocol: Parse is case-insensitive, a port name's prefix names its protocol. */
class ProtocolTest {

    @ParameterizedTest
    @CsvSource({
            "Thrift, THRIFT", "THRIFT, THRIFT", "thrift, THRIFT",
            "grpc-web, GRPC_WEB", "GRPC-Web, GRPC_WEB", "http2, HTTP2", "Mongo, MONGO", "MySQL, MYSQL",
            "udp, UDP", "tls, TLS", "spdy, UNSUPPORTED", "grpc_web, UNSUPPORTED"})
    void parsesCaseInsensitively(String text, Protocol expected) {
        assertEquals(expected, Protocol.parse(text));
    }

    @ParameterizedTest
    @CsvSource({
            "thrift, THRIFT", "thrift-rpc, THRIFT", "THRIFT-x, THRIFT", "grpc-web, GRPC_WEB", "grpc-web-ui, GRPC_WEB",
            "grpc-api, GRPC", "http-web, HTTP", "tcp-db, TCP", "web, UNSUPPORTED"})
    void readsPortNames(String portName, Protocol expected) {
        assertEquals(expected, Protocol.fromPortName(portName));
    }

    @ParameterizedTest
    @CsvSource({"HTTPS, true, true", "TLS, true, true", "TCP, false, true", "MONGO, false, true",
            "HTTP, false, false", "THRIFT, false, false", "UDP, false, false"})
    void classifiesTlsAndTcp(Protocol p, boolean tls, boolean tcp) {
        assertEquals(tls, p.isTls(), p + " tls");
        assertEquals(tcp, p.isTcp(), p + " tcp");
        assertFalse(p.isHttp() && p.isTcp(), p.name());
    }

    @ParameterizedTest
    @CsvSource({"GRPC_WEB, GRPC-Web", "THRIFT, THRIFT", "UNSUPPORTED, UnsupportedProtocol"})
    void printsIstiodsLabels(Protocol p, String label) {
        assertEquals(label, p.label());
        assertTrue(label.length() > 0);
    }
}
