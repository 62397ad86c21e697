package io.meshpilot.security;

import io.meshpilot.bootstrap.Component;
import io.meshpilot.bootstrap.StartupOrder;
import io.meshpilot.bootstrap.StartupRecorder;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;

/**
 * Component 4 (CA / RA), foundation part: owns istiod's serving certificate for 15012 and
 * 15017. Until the CA issue lands this is the self-signed certificate made at start-up; the
 * CA will issue it instead and rotate it.
 */
@ApplicationScoped
public class IstiodCertificates {
    @Inject
    ServingCertificate serving;

    @Inject
    StartupRecorder recorder;

    void start(@Observes @Priority(StartupOrder.CA) @Initialized(ApplicationScoped.class) Object event) {
        recorder.run(Component.CA, () -> "serving certificate self-signed at start (no CA yet) dns="
                + serving.dnsNames() + " notAfter=" + serving.certificate().getNotAfter().toInstant());
    }

    public ServingCertificate serving() {
        return serving;
    }
}
