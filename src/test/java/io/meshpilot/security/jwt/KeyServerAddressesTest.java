package io.meshpilot.security.jwt;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.URI;
import org.junit.jupiter.api.Test;

/** Key sets are never fetched from link-local or cloud metadata addresses (istiod's jwksBlockedIP). */
class KeyServerAddressesTest {

    @Test
    void metadataAndLinkLocalAddressesAreRefused() {
        for (String uri : new String[] {"http://169.254.169.254/latest/meta-data", "http://[fe80::1]/keys",
                "http://100.100.100.200/keys", "https://[fd00:ec2::254]/keys"}) {
            IOException e = assertThrows(IOException.class, () -> KeyServerAddresses.check(URI.create(uri)), uri);
            assertTrue(e.getMessage().startsWith("connection blocked: "), e.getMessage());
        }
    }

    @Test
    void loopbackAndPrivateAddressesAreAllowed() {
        for (String uri : new String[] {"http://127.0.0.1:8080/keys", "http://10.0.0.1/keys", "http://[::1]/keys",
                "http://100.100.100.201/keys", "http://[fd00:ec3::1]/keys"}) {
            assertDoesNotThrow(() -> KeyServerAddresses.check(URI.create(uri)), uri);
        }
    }
}
