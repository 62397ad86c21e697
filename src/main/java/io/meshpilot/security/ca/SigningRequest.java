package io.meshpilot.security.ca;

import io.meshpilot.security.ca.CsrRejectedException.Reason;
import java.io.IOException;
import java.io.StringReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.bouncycastle.asn1.ASN1Encodable;
import org.bouncycastle.asn1.ASN1Encoding;
import org.bouncycastle.asn1.pkcs.Attribute;
import org.bouncycastle.asn1.pkcs.PKCSObjectIdentifiers;
import org.bouncycastle.asn1.x509.Extension;
import org.bouncycastle.asn1.x509.Extensions;
import org.bouncycastle.asn1.x509.GeneralName;
import org.bouncycastle.asn1.x509.GeneralNames;
import org.bouncycastle.asn1.x509.SubjectPublicKeyInfo;
import org.bouncycastle.openssl.PEMParser;
import org.bouncycastle.operator.jcajce.JcaContentVerifierProviderBuilder;
import org.bouncycastle.pkcs.PKCS10CertificationRequest;

/**
 * A PKCS#10 request that has passed the checks a CSR must pass before its key is certified:
 * it parses, its key is one we accept, it is signed by that key (proof of possession). Only
 * the key and the requested SANs are kept; the CSR's subject and other extensions are never
 * copied into a certificate (as istiod: identities come from the authenticated caller).
 *
 * @param publicKey     the key to certify
 * @param requestedSans subject alternative names from the extensionRequest attribute(s)
 */
record SigningRequest(SubjectPublicKeyInfo publicKey, List<GeneralName> requestedSans) {

    /** Parses and vets a PEM CSR. Every failure is a {@link CsrRejectedException}, never a runtime exception. */
    static SigningRequest parse(String pem) throws CsrRejectedException {
        PKCS10CertificationRequest csr = decode(pem);
        SubjectPublicKeyInfo spki;
        List<GeneralName> sans;
        String keyProblem;
        try {
            spki = csr.getSubjectPublicKeyInfo();
            keyProblem = KeyPolicy.csrKeyProblem(spki);
            sans = requestedSans(csr);
        } catch (IOException | RuntimeException e) {
            throw new CsrRejectedException(Reason.MALFORMED_CSR, "CSR content does not parse: " + message(e), e);
        }
        if (keyProblem != null) {
            throw new CsrRejectedException(Reason.UNSUPPORTED_KEY, "CSR key rejected: " + keyProblem);
        }
        boolean valid;
        try {
            valid = csr.isSignatureValid(new JcaContentVerifierProviderBuilder().build(spki));
        } catch (Exception e) { // OperatorCreationException, PKCSException, or the provider's runtime exceptions
            throw new CsrRejectedException(Reason.BAD_CSR_SIGNATURE,
                    "CSR signature cannot be checked: " + message(e), e);
        }
        if (!valid) {
            throw new CsrRejectedException(Reason.BAD_CSR_SIGNATURE,
                    "CSR signature does not verify with its own public key (corrupted or tampered request)");
        }
        return new SigningRequest(spki, sans);
    }

    /** Every SAN the CSR asks for must be one of the identities the caller proved. */
    void checkSansAllowed(GeneralName[] identities) throws CsrRejectedException {
        List<byte[]> allowed = new ArrayList<>();
        for (GeneralName id : identities) {
            allowed.add(der(id));
        }
        for (GeneralName requested : requestedSans) {
            byte[] enc = der(requested);
            if (allowed.stream().noneMatch(a -> Arrays.equals(a, enc))) {
                throw new CsrRejectedException(Reason.SAN_NOT_ALLOWED, "CSR asks for SAN " + IdentitySans.describe(requested)
                        + ", which is not among the caller's identities " + IdentitySans.describe(identities));
            }
        }
    }

    private static PKCS10CertificationRequest decode(String pem) throws CsrRejectedException {
        Object first;
        try (PEMParser parser = new PEMParser(new StringReader(pem))) {
            first = parser.readObject();
        } catch (IOException | RuntimeException e) {
            throw new CsrRejectedException(Reason.MALFORMED_CSR, "CSR is not valid PEM/DER: " + message(e), e);
        }
        if (first == null) {
            throw new CsrRejectedException(Reason.MALFORMED_CSR, "no PEM CERTIFICATE REQUEST block found");
        }
        if (!(first instanceof PKCS10CertificationRequest csr)) {
            throw new CsrRejectedException(Reason.MALFORMED_CSR, "expected a PEM CERTIFICATE REQUEST, found "
                    + first.getClass().getSimpleName());
        }
        return csr;
    }

    private static List<GeneralName> requestedSans(PKCS10CertificationRequest csr) {
        List<GeneralName> out = new ArrayList<>();
        for (Attribute attr : csr.getAttributes(PKCSObjectIdentifiers.pkcs_9_at_extensionRequest)) {
            for (ASN1Encodable value : attr.getAttrValues()) {
                Extension san = Extensions.getInstance(value).getExtension(Extension.subjectAlternativeName);
                if (san != null) {
                    out.addAll(List.of(GeneralNames.getInstance(san.getParsedValue()).getNames()));
                }
            }
        }
        return List.copyOf(out);
    }

    private static byte[] der(GeneralName name) {
        try {
            return name.getEncoded(ASN1Encoding.DER);
        } catch (IOException e) {
            throw new IllegalStateException("cannot encode a general name", e);
        }
    }

    private static String message(Exception e) {
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}
