package io.meshpilot.security.ca;

/**
 * A signing request was refused. {@link #reason()} is what the gRPC layer maps to a status
 * (caller errors to INVALID_ARGUMENT, the CA's own failures to INTERNAL, as istiod's CSRError /
 * TTLError versus CertGenError; in RA mode a signer that does not answer to DEADLINE_EXCEEDED
 * and a Denied/Failed CSR to FAILED_PRECONDITION); the message says what to change.
 */
public final class CsrRejectedException extends Exception {

    /** Why a request was refused. */
    public enum Reason {
        /** Not a PEM {@code CERTIFICATE REQUEST}, or its DER does not parse. */
        MALFORMED_CSR(true),
        /** The CSR is not signed by the key it carries. */
        BAD_CSR_SIGNATURE(true),
        /** The CSR key is not RSA 2048..8192 bits or EC P-256/P-384. */
        UNSUPPORTED_KEY(true),
        /** The CSR asks for a subject alternative name the caller is not entitled to. */
        SAN_NOT_ALLOWED(true),
        /** The caller has no identity to put in the certificate. */
        NO_IDENTITY(true),
        /** An identity cannot be written as a SAN (empty, spaces, not ASCII). */
        INVALID_IDENTITY(true),
        /** The requested lifetime is above the maximum. */
        TTL_TOO_LONG(true),
        /** The CSR PEM is larger than the limit. */
        TOO_LARGE(true),
        /** The CA could not sign (expired CA certificate, provider failure). */
        SIGNING_FAILED(false),
        /** RA mode: the external signer did not answer within the wait. */
        SIGNER_TIMEOUT(false),
        /** RA mode: the CSR object was Denied or Failed; the message carries its reason. */
        SIGNER_REFUSED(false);

        private final boolean callerError;

        Reason(boolean callerError) {
            this.callerError = callerError;
        }

        /** True when the request was at fault, false when the CA was. */
        public boolean callerError() {
            return callerError;
        }

        /** istiod's caerror type, the label of citadel_server_csr_sign_err_count. */
        public String istioErrorType() {
            return switch (this) {
                case TTL_TOO_LONG -> "TTL_ERROR";
                case SIGNING_FAILED, SIGNER_TIMEOUT, SIGNER_REFUSED -> "CERT_GEN_ERROR";
                default -> "CSR_ERROR";
            };
        }
    }

    private final Reason reason;

    public CsrRejectedException(Reason reason, String message) {
        this(reason, message, null);
    }

    public CsrRejectedException(Reason reason, String message, Throwable cause) {
        super(message, cause);
        this.reason = reason;
    }

    public Reason reason() {
        return reason;
    }
}
