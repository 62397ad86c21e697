package io.meshpilot.security.ca;

import java.time.Duration;
import java.util.List;

/**
 * The signing step of CreateCertificate: MeshPilot's own {@link CertificateAuthority}, or in
 * RA mode a registration authority that hands the CSR to an external signer.
 */
public interface CsrSigner {
    /**
     * A certificate for the key in {@code csrPem} naming exactly {@code identities} (the
     * authenticated caller's), with the roots it chains to.
     *
     * @param requestedTtl null, zero or negative for the default
     * @throws CsrRejectedException why nothing was issued
     */
    IssuedChain sign(String csrPem, List<String> identities, Duration requestedTtl) throws CsrRejectedException;
}
