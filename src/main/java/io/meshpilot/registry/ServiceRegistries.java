package io.meshpilot.registry;

import io.helidon.metrics.api.Gauge;
import io.helidon.metrics.api.Metrics;
import io.meshpilot.bootstrap.Component;
import io.meshpilot.bootstrap.PilotArgs;
import io.meshpilot.bootstrap.Readiness;
import io.meshpilot.bootstrap.StartupOrder;
import io.meshpilot.bootstrap.StartupRecorder;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigController;
import io.meshpilot.model.Environment;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.registry.memory.MemoryRegistry;
import io.meshpilot.registry.serviceentry.ServiceEntryRegistry;
import io.meshpilot.xds.DiscoveryServer;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.util.Set;

/**
 * Component 6, the service registries (istiod's initServiceControllers plus
 * initRegistryEventHandlers): the aggregate registry with the ServiceEntry registry (and
 * the Mock registry when --registries asks for it), fed by ServiceEntry, WorkloadEntry and
 * WorkloadGroup events; every other config kind's push-worthy change becomes a full push
 * request naming it.
 */
@ApplicationScoped
public class ServiceRegistries {
    /** Kinds the ServiceEntry registry turns into service and endpoint updates itself. */
    static final Set<String> REGISTRY_KINDS = Set.of("ServiceEntry", "WorkloadEntry", "WorkloadGroup");

    @Inject
    PilotArgs args;

    @Inject
    StartupRecorder recorder;

    @Inject
    ConfigController configs;

    @Inject
    DiscoveryServer discovery;

    @Inject
    Environment environment;

    @Inject
    Readiness readiness;

    private final AggregateRegistry aggregate = new AggregateRegistry();
    private volatile ServiceEntryRegistry serviceEntries;
    private volatile MemoryRegistry mock;

    void start(@Observes @Priority(StartupOrder.SERVICE_REGISTRIES) @Initialized(ApplicationScoped.class) Object e) {
        recorder.run(Component.SERVICE_REGISTRIES, () -> {
            serviceEntries = new ServiceEntryRegistry(configs.store(), discovery,
                    () -> environment.mesh().getTrustDomain(), args.clusterId());
            aggregate.addRegistry(serviceEntries);
            for (String kind : REGISTRY_KINDS) {
                configs.store().registerEventHandler(kind, serviceEntries::onConfigEvent);
            }
            configs.addPushHandler(event -> {
                Config c = event.current() != null ? event.current() : event.old();
                if (!REGISTRY_KINDS.contains(c.gvk().kind())) {
                    discovery.configUpdate(PushRequest.full(TriggerReason.CONFIG, c.key()));
                }
            });
            if (args.registries().contains("Mock")) {
                mock = new MemoryRegistry("Mock", args.clusterId(), discovery);
                aggregate.addRegistry(mock);
            }
            environment.setServiceDiscovery(aggregate);
            Metrics.getOrCreate(Gauge.builder("pilot_services", () -> aggregate.services().size())
                    .description("Total services known to pilot."));
            readiness.register("registries-synced", aggregate::hasSynced);
            return "registries=" + aggregate.registries().stream().map(r -> r.provider() + "/" + r.cluster()).toList();
        });
    }

    /** After the config stores delivered their initial load (start functions). */
    void synced(@Observes @Priority(StartupOrder.START_FUNCTIONS - 20) @Initialized(ApplicationScoped.class) Object e) {
        if (configs.synced()) {
            serviceEntries.markSynced();
        }
    }

    public AggregateRegistry aggregate() {
        return aggregate;
    }

    public ServiceEntryRegistry serviceEntries() {
        return serviceEntries;
    }

    /** The Mock registry, when --registries includes Mock; null otherwise. */
    public MemoryRegistry mock() {
        return mock;
    }
}
