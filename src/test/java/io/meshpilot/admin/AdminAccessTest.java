package io.meshpilot.admin;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import org.junit.jupiter.api.Test;

/**
 * The caller classification behind the admin filter. Non-loopback callers cannot be produced
 * over loopback, so those addresses are checked here as values (no traffic is sent); the
 * server tests show loopback callers pass through the installed filter.
 */
class AdminAccessTest {
    private static InetSocketAddress at(String ip) throws UnknownHostException {
        return new InetSocketAddress(InetAddress.getByName(ip), 40000);
    }

    @Test
    void loopbackCallersAreTrusted() throws Exception {
        assertTrue(AdminAccess.isTrusted(at("127.0.0.1")));
        assertTrue(AdminAccess.isTrusted(at("127.8.9.10")));
        assertTrue(AdminAccess.isTrusted(at("::1")));
        InetSocketAddress mapped = new InetSocketAddress(InetAddress.getByAddress(
                new byte[] {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, (byte) 0xff, (byte) 0xff, 127, 0, 0, 1}), 1);
        assertTrue(AdminAccess.isTrusted(mapped));
    }

    @Test
    void everyoneElseIsNot() throws Exception {
        assertFalse(AdminAccess.isTrusted(at("10.1.2.3")));
        assertFalse(AdminAccess.isTrusted(at("192.0.2.7")));
        assertFalse(AdminAccess.isTrusted(at("2001:db8::1")));
        assertFalse(AdminAccess.isTrusted(at("0.0.0.0")));
        assertFalse(AdminAccess.isTrusted(null));
    }

    @Test
    void protectedPaths() {
        assertTrue(AdminAccess.isProtected("/debug/list"));
        assertFalse(AdminAccess.isProtected("/debug"), "the index names the pages only, open as istiod's");
        assertTrue(AdminAccess.isProtected("/api/v1/server"));
        assertFalse(AdminAccess.isProtected("/ready"));
        assertFalse(AdminAccess.isProtected("/metrics"));
        assertFalse(AdminAccess.isProtected("/version"));
        assertFalse(AdminAccess.isProtected("/debugger"));
    }
}
