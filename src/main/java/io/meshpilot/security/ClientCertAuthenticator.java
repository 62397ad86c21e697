package io.meshpilot.security;

import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import java.security.cert.CertificateParsingException;
import java.security.cert.X509Certificate;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * istiod's client-certificate authenticator: the identities of a caller over mutual TLS are
 * the SPIFFE URI SANs of its verified leaf certificate. A caller without a client
 * certificate is not recognized (another authenticator may know it); a certificate without a
 * SPIFFE identity is refused.
 */
public final class ClientCertAuthenticator implements Authenticator {
    /** istiod's name for it. */
    public static final String TYPE = "ClientCertAuthenticator";
    private static final int URI_SAN = 6;

    @Override
    public String type() {
        return TYPE;
    }

    @Override
    public Optional<Caller> authenticate(CallPeer peer, CallHeaders headers)
            throws AuthenticationException {
        if (!peer.secure() || peer.certificates().isEmpty()) {
            return Optional.empty();
        }
        List<String> ids = spiffeIds(peer.certificates().get(0));
        if (ids.isEmpty()) {
            throw new AuthenticationException("the client certificate carries no spiffe:// URI SAN");
        }
        return Optional.of(new Caller(TYPE, ids));
    }

    static List<String> spiffeIds(X509Certificate cert) throws AuthenticationException {
        List<String> ids = new ArrayList<>();
        try {
            var sans = cert.getSubjectAlternativeNames();
            if (sans != null) {
                for (List<?> san : sans) {
                    if (san.size() >= 2 && Integer.valueOf(URI_SAN).equals(san.get(0))
                            && san.get(1) instanceof String uri && uri.startsWith("spiffe://")) {
                        ids.add(uri);
                    }
                }
            }
        } catch (CertificateParsingException e) {
            throw new AuthenticationException("cannot read the client certificate's SANs: " + e.getMessage());
        }
        return ids;
    }
}
