package io.meshpilot.testing;

import java.io.IOException;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

/** A JSSE client context that trusts one root only, for tests that check what a TLS port presents. */
public final class TrustingTls {
    private TrustingTls() {
    }

    public static SSLContext trusting(X509Certificate root) throws GeneralSecurityException, IOException {
        var tmf = TrustManagerFactory.getInstance("PKIX");
        var ks = KeyStore.getInstance("PKCS12");
        ks.load(null, null);
        ks.setCertificateEntry("root", root);
        tmf.init(ks);
        var ctx = SSLContext.getInstance("TLS");
        ctx.init(null, tmf.getTrustManagers(), null);
        return ctx;
    }
}
