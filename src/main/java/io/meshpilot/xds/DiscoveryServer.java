package io.meshpilot.xds;

import io.meshpilot.bootstrap.Component;
import io.meshpilot.bootstrap.StartupOrder;
import io.meshpilot.bootstrap.StartupRecorder;
import io.meshpilot.model.ConfigKey;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.Environment;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.ShardKey;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.monitoring.IstioCounter;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import java.lang.System.Logger.Level;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Component 7, the DiscoveryServer (istiod's xds.DiscoveryServer), so far its update entry
 * points: config, service and endpoint changes arrive here as {@link PushRequest}s, counted
 * in istiod's {@code pilot_inbound_updates} and {@code pilot_push_triggers}. Endpoint updates
 * go into the {@link EndpointIndex} and become incremental EDS requests unless the index says
 * a full push is needed. The xDS issue adds debouncing, the push queue and the ADS streams
 * behind {@link #configUpdate}.
 */
@ApplicationScoped
public class DiscoveryServer implements io.meshpilot.registry.RegistryUpdates {
    private static final System.Logger LOG = System.getLogger(DiscoveryServer.class.getName());
    static final IstioCounter INBOUND_UPDATES = IstioCounter.of("pilot_inbound_updates", "type",
            "Total number of updates received by pilot.");
    static final IstioCounter PUSH_TRIGGERS = IstioCounter.of("pilot_push_triggers", "type",
            "Total number of times a push was triggered, labeled by reason for the push.");

    @Inject
    Environment environment;

    @Inject
    StartupRecorder recorder;

    private final List<Consumer<PushRequest>> listeners = new CopyOnWriteArrayList<>();

    void start(@Observes @Priority(StartupOrder.DISCOVERY_SERVER) @Initialized(ApplicationScoped.class) Object event) {
        recorder.run(Component.DISCOVERY_SERVER, () -> "update entry points ready (config, service, endpoint)");
    }

    /** A config change (any kind but the ServiceEntry registry's own): always a full push. */
    public void configUpdate(PushRequest request) {
        INBOUND_UPDATES.increment("config");
        push(request);
    }

    /** A service added, changed or deleted by a registry: a full push naming it. */
    @Override
    public void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted) {
        INBOUND_UPDATES.increment(deleted ? "svcdelete" : "svc");
        if (deleted) {
            environment.endpointIndex().deleteShard(shard, hostname, namespace);
        }
        push(PushRequest.full(TriggerReason.SERVICE, new ConfigKey("ServiceEntry", namespace, hostname)));
    }

    /**
     * A registry's new endpoints for one service in one shard. Incremental EDS when only
     * endpoints changed; full when the service's first endpoints arrive or its identities
     * change; nothing when nothing changed.
     */
    @Override
    public void edsUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        INBOUND_UPDATES.increment("eds");
        EndpointIndex.PushType type = environment.endpointIndex().update(shard, hostname, namespace, endpoints);
        ConfigKey key = new ConfigKey("ServiceEntry", namespace, hostname);
        switch (type) {
            case INCREMENTAL -> push(PushRequest.incremental(TriggerReason.ENDPOINT, key));
            case FULL -> push(PushRequest.full(TriggerReason.ENDPOINT, key));
            case NONE -> LOG.log(Level.DEBUG, () -> "endpoints unchanged service=" + hostname + "/" + namespace);
        }
    }

    /** Endpoints recorded without a push: the service update that follows pushes fully. */
    @Override
    public void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        INBOUND_UPDATES.increment("eds");
        environment.endpointIndex().update(shard, hostname, namespace, endpoints);
    }

    private void push(PushRequest request) {
        for (TriggerReason r : request.reasons()) {
            PUSH_TRIGGERS.increment(r.label());
        }
        LOG.log(Level.DEBUG, () -> "push request full=" + request.full() + " configs=" + request.configsUpdated()
                + " reasons=" + request.reasons());
        for (Consumer<PushRequest> l : listeners) {
            try {
                l.accept(request);
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "push request listener failed", e);
            }
        }
    }

    /** Observes every push request (the push pipeline of the xDS issue; tests). */
    public void addListener(Consumer<PushRequest> l) {
        listeners.add(l);
    }

    public void removeListener(Consumer<PushRequest> l) {
        listeners.remove(l);
    }

    /** Current value of pilot_inbound_updates{type}. */
    public long inboundUpdates(String type) {
        return INBOUND_UPDATES.value(type);
    }

    /** Current value of pilot_push_triggers{type}. */
    public long pushTriggers(TriggerReason reason) {
        return PUSH_TRIGGERS.value(reason.label());
    }
}
