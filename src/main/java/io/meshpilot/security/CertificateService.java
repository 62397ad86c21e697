package io.meshpilot.security;

import com.google.protobuf.Value;
import io.grpc.BindableService;
import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import io.grpc.protobuf.ProtoUtils;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.meshpilot.api.security.v1alpha1.IstioCertificateRequest;
import io.meshpilot.api.security.v1alpha1.IstioCertificateResponse;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.security.ca.CsrSigner;
import io.meshpilot.security.ca.CsrRejectedException;
import io.meshpilot.security.ca.CsrRejectedException.Reason;
import io.meshpilot.util.PrintableText;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.Supplier;

/**
 * istiod's {@code istio.v1.auth.IstioCertificateService/CreateCertificate} on the secure port:
 * authenticates the caller with istiod's authenticators, then signs the CSR for the caller's
 * identities only. Every refusal is a gRPC status that says why (UNAUTHENTICATED,
 * PERMISSION_DENIED, INVALID_ARGUMENT; in RA mode DEADLINE_EXCEEDED when the external signer
 * does not answer, FAILED_PRECONDITION when it denies); bad input never surfaces as an
 * internal error.
 */
public final class CertificateService implements BindableService {
    public static final String SERVICE = "istio.v1.auth.IstioCertificateService";
    /** The method, also for clients (tests, the benchmark): no generated stubs in this build. */
    public static final MethodDescriptor<IstioCertificateRequest, IstioCertificateResponse> CREATE_CERTIFICATE =
            MethodDescriptor.<IstioCertificateRequest, IstioCertificateResponse>newBuilder()
                    .setType(MethodDescriptor.MethodType.UNARY)
                    .setFullMethodName(MethodDescriptor.generateFullMethodName(SERVICE, "CreateCertificate"))
                    .setRequestMarshaller(ProtoUtils.marshaller(IstioCertificateRequest.getDefaultInstance()))
                    .setResponseMarshaller(ProtoUtils.marshaller(IstioCertificateResponse.getDefaultInstance()))
                    .build();
    /** istiod's metadata key for a node agent asking on behalf of a workload. */
    static final String IMPERSONATED_IDENTITY = "ImpersonatedIdentity";
    /** istiod's whole answer to a refused impersonation, whatever the reason. */
    static final String IMPERSONATION_REFUSED = "request impersonation authentication failure";

    /** Rejections counted as citadel_server_csr_parsing_err_count; the rest as sign errors. */
    private static final Set<Reason> PARSING = EnumSet.of(Reason.MALFORMED_CSR,
            Reason.BAD_CSR_SIGNATURE, Reason.TOO_LARGE);
    private static final System.Logger LOG = System.getLogger(CertificateService.class.getName());

    private final Authenticators authenticators;
    private final Supplier<? extends CsrSigner> ca;
    private final ImpersonationPolicy impersonation;

    /** @param ca what signs: the CA, or in RA mode the Kubernetes CSR API */
    public CertificateService(Authenticators authenticators, Supplier<? extends CsrSigner> ca) {
        this(authenticators, ca, ImpersonationPolicy.NOBODY);
    }

    /**
     * @param ca            what signs: the CA, or in RA mode the Kubernetes CSR API
     * @param impersonation who may ask for another identity (istiod's node authorizer)
     */
    public CertificateService(Authenticators authenticators, Supplier<? extends CsrSigner> ca,
                              ImpersonationPolicy impersonation) {
        this.authenticators = authenticators;
        this.ca = ca;
        this.impersonation = impersonation;
    }

    @Override
    public ServerServiceDefinition bindService() {
        return ServerServiceDefinition.builder(SERVICE)
                .addMethod(CREATE_CERTIFICATE, ServerCalls.asyncUnaryCall(this::createCertificate))
                .build();
    }

    void createCertificate(IstioCertificateRequest request, StreamObserver<IstioCertificateResponse> response) {
        CaMetrics.CSR_COUNT.increment();
        CallPeer peer = CallPeer.current().orElse(null);
        String from = peer == null ? "?" : String.valueOf(peer.remoteAddress());
        Authenticator.Caller caller;
        try {
            if (peer == null) {
                throw new Authenticator.AuthenticationException("no peer information for the call");
            }
            caller = authenticators.authenticate(peer, CallPeer.currentHeaders());
        } catch (Authenticator.AuthenticationException e) {
            CaMetrics.AUTHENTICATION_FAILURE.increment();
            LOG.log(Level.WARNING, "CSR refused peer=" + from + ": " + e.getMessage());
            response.onError(Status.UNAUTHENTICATED.withDescription("request authenticate failure: " + e.getMessage())
                    .asRuntimeException());
            return;
        }
        String impersonated = request.getMetadata().getFieldsOrDefault(IMPERSONATED_IDENTITY,
                Value.getDefaultInstance()).getStringValue();
        List<String> identities = caller.identities();
        if (!impersonated.isEmpty()) {
            try {
                impersonation.authorize(caller, impersonated);
            } catch (Authenticator.AuthenticationException e) {
                // istiod's opaque answer: which pods run on which node is not the caller's to learn;
                // the reason goes to the log
                CaMetrics.AUTHENTICATION_FAILURE.increment();
                LOG.log(Level.WARNING, "CSR refused peer=" + from + " identities=" + caller.identities()
                        + ": impersonation of " + PrintableText.clip(impersonated, 256) + " denied: " + e.getMessage());
                response.onError(Status.UNAUTHENTICATED.withDescription(IMPERSONATION_REFUSED).asRuntimeException());
                return;
            }
            // an authorized node agent gets a certificate for the impersonated identity only
            identities = List.of(impersonated);
        }
        List<String> signedFor = identities;
        try {
            var chain = ca.get().sign(request.getCsr(), signedFor,
                    Duration.ofSeconds(request.getValidityDuration()));
            CaMetrics.SUCCESS.increment();
            LOG.log(Level.DEBUG, () -> "CSR signed peer=" + from + " identities=" + signedFor
                    + " by=" + caller.authenticator() + " caller=" + caller.identities());
            response.onNext(IstioCertificateResponse.newBuilder().addAllCertChain(chain.istioResponseChain()).build());
            response.onCompleted();
        } catch (CsrRejectedException e) {
            String reason = e.reason().name().toLowerCase(Locale.ROOT);
            if (PARSING.contains(e.reason())) {
                CaMetrics.CSR_PARSING_ERROR.increment(reason);
            } else {
                CaMetrics.SIGN_ERROR.increment(e.reason().istioErrorType());
            }
            LOG.log(Level.WARNING, "CSR rejected peer=" + from + " identities=" + signedFor
                    + " reason=" + reason + ": " + e.getMessage());
            Status status = switch (e.reason()) {
                case SAN_NOT_ALLOWED -> Status.PERMISSION_DENIED;
                case SIGNER_TIMEOUT -> Status.DEADLINE_EXCEEDED;
                case SIGNER_REFUSED -> Status.FAILED_PRECONDITION;
                default -> e.reason().callerError() ? Status.INVALID_ARGUMENT : Status.INTERNAL;
            };
            response.onError(status.withDescription(e.getMessage()).asRuntimeException());
        }
    }
}
