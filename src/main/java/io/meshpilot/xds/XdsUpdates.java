package io.meshpilot.xds;

import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.Environment;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.Service;
import io.meshpilot.model.ShardKey;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.model.WaypointServices;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.networking.HboneEndpoints;
import io.meshpilot.registry.RegistryUpdates;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Where changes enter the push path (istiod's ConfigUpdate and the EDS updater): config,
 * credential, service and endpoint changes become {@link PushRequest}s, counted in istiod's
 * {@code pilot_inbound_updates} and {@code pilot_push_triggers}, and go to the push pipeline.
 * Endpoint updates go into the {@link EndpointIndex} and become incremental EDS requests unless
 * the index says a full push is needed.
 */
public final class XdsUpdates implements RegistryUpdates {
    private static final System.Logger LOG = System.getLogger(XdsUpdates.class.getName());
    static final IstioCounter INBOUND_UPDATES = IstioCounter.of("pilot_inbound_updates", "type",
            "Total number of updates received by pilot.");
    static final IstioCounter PUSH_TRIGGERS = IstioCounter.of("pilot_push_triggers", "type",
            "Total number of times a push was triggered, labeled by reason for the push.");

    private final Environment environment;
    private final XdsCache cache;
    private final XdsStatus status;
    private final List<Consumer<PushRequest>> listeners = new CopyOnWriteArrayList<>();
    private volatile PushPipeline pipeline;

    XdsUpdates(Environment environment, XdsCache cache, XdsStatus status) {
        this.environment = environment;
        this.cache = cache;
        this.status = status;
    }

    /** From now on requests go to {@code pipeline} (once the first PushContext exists). */
    void pushTo(PushPipeline pipeline) {
        this.pipeline = pipeline;
    }

    /** A config change (any kind but the ServiceEntry registry's own): always a full push. */
    public void configUpdate(PushRequest request) {
        INBOUND_UPDATES.increment("config");
        push(request);
    }

    /**
     * TLS credentials added, changed or removed: an SDS-only push (istiod's SecretTrigger,
     * not full) to the proxies watching one of them; no new PushContext.
     */
    public void credentialsUpdate(Set<ConfigKey> secrets) {
        status.credentialsChanged();
        if (secrets.isEmpty()) {
            return;
        }
        INBOUND_UPDATES.increment("config");
        push(PushRequest.incremental(TriggerReason.SECRET, secrets.toArray(ConfigKey[]::new)));
    }

    /** istiod's reloadGateways: a forced full push for the networks trigger, counted as a config update. */
    @Override
    public void networkGatewaysUpdate() {
        configUpdate(PushRequest.full(TriggerReason.NETWORKS));
    }

    /**
     * The ambient index changed these Address resources: a push of them to ztunnels, not full
     * (istiod's ConfigUpdate with AddressesUpdated and the ambient reason), counted as a config update.
     */
    @Override
    public void addressesUpdate(Set<String> keys, Set<String> waypoints) {
        INBOUND_UPDATES.increment("config");
        push(PushRequest.addresses(keys, waypoints));
    }

    /** A full push naming the policies as AuthorizationPolicies, which ztunnels' Authorization type follows. */
    @Override
    public void ambientPoliciesUpdate(Set<String> names) {
        configUpdate(PushRequest.full(TriggerReason.AMBIENT, names.stream().map(n -> {
            int slash = n.indexOf('/');
            return new ConfigKey("AuthorizationPolicy", n.substring(0, slash), n.substring(slash + 1));
        }).toArray(ConfigKey[]::new)));
    }

    /** A service added, changed or deleted by a registry: a full push naming it. */
    @Override
    public void svcUpdate(ShardKey shard, String hostname, String namespace, boolean deleted) {
        INBOUND_UPDATES.increment(deleted ? "svcdelete" : "svc");
        if (deleted) {
            environment.endpointIndex().deleteShard(shard, hostname, namespace);
            cache.invalidateHosts(Set.of(hostname));
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
        // a waypoint's endpoints are also the gateway endpoints of the services that send gateway traffic to it
        if (type == EndpointIndex.PushType.NONE) {
            LOG.log(Level.DEBUG, () -> "endpoints unchanged service=" + hostname + "/" + namespace);
            return;
        }
        List<ConfigKey> keys = new ArrayList<>(List.of(new ConfigKey("ServiceEntry", namespace, hostname)));
        ingressWaypointUsers(hostname, namespace).forEach(s -> keys.add(new ConfigKey("ServiceEntry", s.namespace(),
                s.hostname())));
        cache.invalidateHosts(keys.stream().map(ConfigKey::name).collect(Collectors.toSet()));
        ConfigKey[] changed = keys.toArray(ConfigKey[]::new);
        push(type == EndpointIndex.PushType.FULL ? PushRequest.full(TriggerReason.ENDPOINT, changed)
                : PushRequest.incremental(TriggerReason.ENDPOINT, changed));
    }

    /**
     * The services whose gateway traffic goes through the waypoint whose Service is
     * {@code hostname} (istiod's RegisterEdsShim), as the current push binds them.
     */
    private List<Service> ingressWaypointUsers(String hostname, String namespace) {
        PushContext push = status.currentPushContext();
        int dot = hostname.indexOf('.');
        // no gateway sends to a waypoint unless ambient's ingress waypoint routing is on
        if (push == null || dot < 0 || !push.hboneSend().ingressWaypoints()) {
            return List.of();
        }
        WaypointServices.Waypoint waypoint = new WaypointServices.Waypoint(namespace, hostname.substring(0, dot));
        if (!hostname.equals(HboneEndpoints.waypointHost(waypoint, push.domainSuffix()))) {
            return List.of();
        }
        return push.waypointServices().ingressUsers(waypoint);
    }

    /** Endpoints recorded without a push: the service update that follows pushes fully. */
    @Override
    public void edsCacheUpdate(ShardKey shard, String hostname, String namespace, List<IstioEndpoint> endpoints) {
        INBOUND_UPDATES.increment("eds");
        environment.endpointIndex().update(shard, hostname, namespace, endpoints);
        cache.invalidateHosts(Set.of(hostname));
    }

    private void push(PushRequest request) {
        for (TriggerReason r : request.reasons()) {
            PUSH_TRIGGERS.increment(r.label());
        }
        PushPipeline p = pipeline;
        // before the first PushContext no proxy is served, and that context includes the change
        if (p != null && status.ready()) {
            p.enqueue(request);
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

    /** Observes every push request: the Gateway API controller (its gateways' endpoints) and tests. */
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
