package io.meshpilot.bootstrap;

import io.meshpilot.features.PilotFeatures;
import io.meshpilot.features.ServerMode;
import io.meshpilot.grpc.GrpcServices;
import io.meshpilot.lifecycle.Component;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.StartupRecorder.Built;
import io.meshpilot.model.Environment;
import io.meshpilot.security.Authenticators;
import io.meshpilot.security.CaOptions;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ca.CaLoadException;
import io.meshpilot.security.istiod.CaSetup;
import io.meshpilot.security.istiod.IstiodCertFiles;
import io.meshpilot.security.istiod.IstiodCertificates;
import java.nio.file.Path;
import java.util.List;

/**
 * The CA and RA: the workload CA (self-signed or plugged-in), the RA when EXTERNAL_CA says
 * so, istiod's own serving certificate, and the authenticators of CreateCertificate. Built
 * before any listener: the TLS listeners are configured with its certificate. With
 * ENABLE_CA_SERVER=false neither CA nor RA exists and the certificate comes from files.
 */
final class CaInit {
    private CaInit() {
    }

    static Built<IstiodCertificates> ca(PilotArgs args, Environment environment, Platform platform,
                                        Authenticators authenticators, GrpcServices grpcServices,
                                        List<AutoCloseable> closeables) {
        var f = args.features();
        CaOptions options = new CaOptions(f.rootCaDir(), platform.caRootStore(), args.ca().ecdsa(), f.ca().rsaKeySize(),
                f.ca().selfSignedTtl(), f.ca().rootCheckInterval(), f.ca().gracePercentile(),
                f.defaultWorkloadCertTtl(), f.maxWorkloadCertTtl(),
                ServingCertificate.istiodNames(args.namespace(), args.domainSuffix(), f.ca().customHosts(),
                        args.mode() == ServerMode.EMBEDDED), f.jwtRule());
        if (!f.ca().server()) {
            return withoutCa(args, options, environment, platform, authenticators, grpcServices, closeables);
        }
        CaSetup setup;
        try {
            setup = CaSetup.create(options);
        } catch (CaLoadException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        IstiodCertificates certificates = new IstiodCertificates(setup, options, environment, authenticators,
                grpcServices);
        closeables.add(certificates);
        platform.configureCa(certificates, setup, environment);
        String started;
        try {
            // istiod's hasCustomTLSCerts: the flags, else the well-known files under the working directory
            IstiodCertFiles.find(args.tls(), Path.of("")).ifPresent(certificates::serveFromFiles);
            started = certificates.start();
        } catch (IllegalArgumentException | CaLoadException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        return new Built<>(certificates, started + platform.addAuthenticators(authenticators, environment));
    }

    /**
     * istiod's maybeCreateCA with ENABLE_CA_SERVER off creates no CA and no RA, so nothing reads or
     * writes istiod's CA Secrets. istiod then runs without a certificate when it finds no files
     * (its secure port off, a warning); here the secure port and the webhooks always serve TLS, so
     * start-up stops instead, saying which files were looked for.
     */
    private static Built<IstiodCertificates> withoutCa(PilotArgs args, CaOptions options, Environment environment,
                                                       Platform platform, Authenticators authenticators,
                                                       GrpcServices grpcServices, List<AutoCloseable> closeables) {
        IstiodCertFiles files = IstiodCertFiles.find(args.tls(), Path.of("")).orElseThrow(() ->
                new ComponentStartException(Component.CA, "ENABLE_CA_SERVER=false needs istiod's certificate from files:"
                        + " set --tlsCertFile, --tlsKeyFile and --caCertFile, or mount them under ./var/run/secrets/istiod",
                        null));
        IstiodCertificates certificates;
        String started;
        try {
            certificates = IstiodCertificates.withoutCa(files, options, environment, authenticators, grpcServices);
            closeables.add(certificates);
            started = certificates.start();
        } catch (IllegalArgumentException | CaLoadException e) {
            throw new ComponentStartException(Component.CA, e.getMessage(), e);
        }
        return new Built<>(certificates, started + platform.addAuthenticators(authenticators, environment));
    }

    /** istiod's own certificate from a Kubernetes signer (PILOT_CERT_PROVIDER) is an RA feature. */
    static void refuseServingSignerWithoutRa(PilotFeatures f) {
        if (f.ra().servingSigner().isPresent()) {
            throw new ComponentStartException(Component.CA, "PILOT_CERT_PROVIDER=" + f.ra().certProvider()
                    + " needs RA mode (EXTERNAL_CA=" + PilotFeatures.Ra.KUBERNETES_API + ")", null);
        }
    }
}
