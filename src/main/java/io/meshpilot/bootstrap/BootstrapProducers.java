package io.meshpilot.bootstrap;

import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import jakarta.inject.Singleton;
import java.lang.System.Logger.Level;

/** Makes the pre-container {@link BootstrapContext} injectable, and starts component 1 (args). */
@ApplicationScoped
public class BootstrapProducers {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    @Produces
    @Singleton
    PilotArgs pilotArgs() {
        return BootstrapContext.current().args();
    }


    @Inject
    StartupRecorder recorder;

    void start(@Observes @Priority(StartupOrder.ARGS) @Initialized(ApplicationScoped.class) Object event) {
        recorder.run(Component.ARGS, () -> {
            PilotArgs a = BootstrapContext.current().args();
            for (String ignored : a.ignoredArguments()) {
                LOG.log(Level.WARNING, "unknown argument ignored (istiod accepts unknown flags): " + ignored);
            }
            return "mode=" + a.mode().label() + " namespace=" + a.namespace() + " cluster=" + a.clusterId()
                    + " domain=" + a.domainSuffix() + " grpcTransport=" + a.grpcTransport().name().toLowerCase();
        });
    }
}
