package io.meshpilot.xds;

import io.meshpilot.features.PilotFeatures;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.model.WaypointServices;
import io.meshpilot.model.WaypointWorkloads;
import io.meshpilot.networking.ClusterNames;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * The push path after {@code configUpdate} (docs/ARCHITECTURE.md, how a change reaches a proxy): requests are merged while changes
 * keep arriving (quiet for PILOT_DEBOUNCE_AFTER, at most PILOT_DEBOUNCE_MAX); a full request
 * gets a new immutable PushContext; then every connection is pushed only what the request
 * affects (an endpoint change: EDS of the clusters of the changed services, only to proxies
 * watching them), through istiod's push queue (one pending push per proxy, merged) on
 * PILOT_PUSH_THROTTLE workers.
 */
final class PushPipeline implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(PushPipeline.class.getName());

    private final XdsStatus status;
    private final ConnectionTable connections;
    private final AdsProtocol protocol;
    private final Duration debounceAfter;
    private final Duration debounceMax;
    private final boolean edsDebounce;
    private final ScheduledExecutorService debouncer = Executors.newSingleThreadScheduledExecutor(
            r -> Thread.ofPlatform().daemon().name("push-debounce").unstarted(r));
    private final ExecutorService workers;
    private final PushQueue queue = new PushQueue();
    private Pending pending;
    private long firstAt;
    private long lastAt;
    private boolean scheduled;

    PushPipeline(XdsStatus status, ConnectionTable connections, AdsProtocol protocol, PilotFeatures features) {
        this.status = status;
        this.connections = connections;
        this.protocol = protocol;
        this.debounceAfter = features.debounceAfter();
        this.debounceMax = features.debounceMax();
        this.edsDebounce = features.enableEdsDebounce();
        this.workers = Executors.newFixedThreadPool(features.pushThrottle(),
                r -> Thread.ofPlatform().daemon().name("push-worker").unstarted(r));
        for (int i = 0; i < features.pushThrottle(); i++) {
            workers.execute(this::work);
        }
    }

    synchronized void enqueue(PushRequest request) {
        if (!request.full() && !edsDebounce) {
            debouncer.execute(() -> run(request));
            return;
        }
        long now = System.nanoTime();
        if (pending == null) {
            pending = new Pending();
            firstAt = now;
        }
        pending.add(request);
        lastAt = now;
        if (!scheduled) {
            scheduled = true;
            debouncer.schedule(this::check, debounceAfter.toNanos(), TimeUnit.NANOSECONDS);
        }
    }

    /** Fires when quiet long enough or waited long enough; otherwise looks again later. */
    private void check() {
        PushRequest ready;
        synchronized (this) {
            long now = System.nanoTime();
            long quiet = now - lastAt;
            long waited = now - firstAt;
            if (quiet < debounceAfter.toNanos() && waited < debounceMax.toNanos()) {
                long next = Math.min(debounceAfter.toNanos() - quiet, debounceMax.toNanos() - waited);
                debouncer.schedule(this::check, Math.max(next, 1_000_000), TimeUnit.NANOSECONDS);
                return;
            }
            ready = pending == null ? null : pending.request();
            pending = null;
            scheduled = false;
            XdsMetrics.DEBOUNCE_TIME.record(Duration.ofNanos(now - firstAt));
            if (ready != null) {
                // istiod's "Push debounce stable" line
                LOG.log(Level.INFO, "push debounce stable full=" + ready.full() + " configs=" + ready.configsUpdated().size()
                        + " reasons=" + ready.reasons() + " debounced=" + TimeUnit.NANOSECONDS.toMillis(now - firstAt)
                        + " ms quiet=" + TimeUnit.NANOSECONDS.toMillis(quiet) + " ms");
            }
        }
        if (ready != null) {
            run(ready);
        }
    }

    private void run(PushRequest request) {
        try {
            PushContext push = status.currentPushContext();
            if (push == null) {
                return; // not started yet: the first push context will include this change
            }
            if (request.full()) {
                push = status.buildPushContext();
                XdsMetrics.PUSH_CONTEXT_INIT.record(push.buildTime());
                status.setPushContext(push);
                status.recordPushed(request.configsUpdated(), push.version());
            }
            for (Connection con : connections.all()) {
                queue.enqueue(con, request);
            }
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "push failed: " + request, e);
        }
    }

    /** A worker: takes the oldest pending push and pushes what it affects, with the newest PushContext. */
    private void work() {
        while (true) {
            PushQueue.Item item;
            try {
                item = queue.dequeue();
            } catch (InterruptedException e) {
                return;
            }
            if (item == null) {
                return; // closed
            }
            Connection con = item.connection();
            try {
                XdsMetrics.QUEUE_TIME.record(Duration.ofNanos(System.nanoTime() - item.queuedNanos()));
                if (!connections.isConnected(con)) {
                    continue;
                }
                PushContext context = status.currentPushContext();
                for (Affected a : affected(con, item.request(), changedHosts(item.request()), context.domainSuffix())) {
                    Connection.Watch w = a.watch();
                    try {
                        if (a.changedClusters() == null) {
                            protocol.push(con, w, context, item.request());
                        } else {
                            protocol.pushChangedEndpoints(con, w, context, a.changedClusters());
                        }
                    } catch (RuntimeException e) {
                        XdsMetrics.INTERNAL_ERRORS.increment();
                        LOG.log(Level.WARNING, "push failed proxy=" + con.proxy().id() + " type="
                                + TypeUrls.shortName(w.typeUrl()) + ": " + e.getMessage());
                    }
                }
                XdsMetrics.CONVERGENCE.record(Duration.between(item.request().start(), Instant.now()));
            } finally {
                queue.done(con);
            }
        }
    }

    /** The services a request changed; workers share the answer for the request they all push. */
    private Set<String> changedHosts(PushRequest request) {
        HostsOf last = lastHosts;
        if (last != null && last.request() == request) {
            return last.hosts();
        }
        Set<String> hosts = new HashSet<>();
        for (ConfigKey k : request.configsUpdated()) {
            if (k.kind().equals("ServiceEntry")) {
                hosts.add(k.name());
            }
        }
        HostsOf computed = new HostsOf(request, Set.copyOf(hosts));
        lastHosts = computed;
        return computed.hosts();
    }

    private record HostsOf(PushRequest request, Set<String> hosts) {
    }

    private volatile HostsOf lastHosts;

    /**
     * The requests being debounced, merged in place: merging 2,000 endpoint events one
     * immutable request at a time copied the growing key set each time (quadratic).
     */
    private static final class Pending {
        private boolean full;
        private final Set<ConfigKey> keys = new HashSet<>();
        private final Set<TriggerReason> reasons = EnumSet.noneOf(TriggerReason.class);
        private final Set<String> addresses = new HashSet<>();
        private final Set<String> waypoints = new HashSet<>();
        private Instant start;

        void add(PushRequest r) {
            full |= r.full();
            keys.addAll(r.configsUpdated());
            addresses.addAll(r.addressesUpdated());
            waypoints.addAll(r.waypointsUpdated());
            reasons.addAll(r.reasons());
            start = start == null || r.start().isBefore(start) ? r.start() : start;
        }

        PushRequest request() {
            return new PushRequest(full, keys, reasons, start, addresses, waypoints);
        }
    }

    /**
     * A watch a request makes us push: all of it, or, after an endpoint-only change, the
     * clusters of the changed services ({@code changedClusters}, istiod's partial EDS push).
     */
    record Affected(Connection.Watch watch, Set<String> changedClusters) {
    }

    /**
     * Full: every watched type (CDS, EDS, LDS, RDS order), SDS too when no change is named or
     * a Secret is, ECDS when no change is named or a WasmPlugin or EnvoyFilter is (istiod's
     * ecdsNeedsPush), ztunnel's Authorization type when no change is named or a policy is.
     * Incremental: EDS of the changed services; SDS when a Secret the proxy watches changed.
     * Either: ztunnel's Address type when the request names changed addresses (its generator
     * sends only those). A waypoint's LDS when the request names its waypoint among those whose
     * workloads changed (istiod's waypointNeedsPush).
     */
    private static List<Affected> affected(Connection con, PushRequest request, Set<String> hosts, String domainSuffix) {
        var watches = con.watches();
        List<Affected> out = affectedOtherThanAddresses(con, request, hosts, watches);
        Connection.Watch addresses = watches.get(TypeUrls.ADDRESS);
        boolean addressesChanged = addresses != null && !request.addressesUpdated().isEmpty();
        Connection.Watch listeners = watches.get(TypeUrls.LISTENER);
        boolean waypointListeners = !request.full() && listeners != null
                && waypointWorkloadsChanged(con.proxy(), request, domainSuffix);
        if (!addressesChanged && !waypointListeners) {
            return out;
        }
        out = new ArrayList<>(out);
        if (waypointListeners) {
            out.add(new Affected(listeners, null));
        }
        if (addressesChanged) {
            out.add(new Affected(addresses, null));
        }
        return out;
    }

    /** Whether {@code proxy} is a waypoint whose bound workloads the request changed. */
    private static boolean waypointWorkloadsChanged(Proxy proxy, PushRequest request, String domainSuffix) {
        if (request.waypointsUpdated().isEmpty()) {
            return false;
        }
        return WaypointServices.Waypoint.of(proxy)
                .map(w -> request.waypointsUpdated().contains(WaypointWorkloads.key(w, domainSuffix)))
                .orElse(false);
    }

    private static List<Affected> affectedOtherThanAddresses(Connection con, PushRequest request,
                                                                     Set<String> hosts,
                                                                     Map<String, Connection.Watch> watches) {
        if (request.full()) {
            List<String> types = new ArrayList<>(
                    List.of(TypeUrls.CLUSTER, TypeUrls.ENDPOINT, TypeUrls.LISTENER, TypeUrls.ROUTE));
            if (SecretGenerator.needsPush(request.configsUpdated())) {
                types.add(TypeUrls.SECRET);
            }
            if (EcdsGenerator.needsPush(request.configsUpdated())) {
                types.add(TypeUrls.EXTENSION_CONFIG);
            }
            if (WorkloadRbacGenerator.needsPush(request.configsUpdated())) {
                types.add(TypeUrls.WORKLOAD_AUTHORIZATION);
            }
            return types.stream()
                    .map(watches::get).filter(w -> w != null && !w.names().isEmpty() || w != null && w.wildcard())
                    .map(w -> new Affected(w, null))
                    .toList();
        }
        List<Affected> out = new ArrayList<>(2);
        Connection.Watch eds = watches.get(TypeUrls.ENDPOINT);
        if (eds != null && !hosts.isEmpty()) {
            Map<String, List<String>> byHost = eds.names.clustersByHost();
            Set<String> changed = new HashSet<>();
            if (hosts.size() < byHost.size()) {
                for (String host : hosts) {
                    changed.addAll(byHost.getOrDefault(host, List.of()));
                }
            } else if (hosts.containsAll(byHost.keySet()) && !byHost.isEmpty()) {
                changed = eds.names; // every service it watches changed (a mesh-wide endpoint change)
            } else {
                for (var e : byHost.entrySet()) {
                    if (hosts.contains(e.getKey())) {
                        changed.addAll(e.getValue());
                    }
                }
            }
            if (!changed.isEmpty()) {
                out.add(new Affected(eds, changed));
            }
        }
        Connection.Watch sds = watches.get(TypeUrls.SECRET);
        if (sds != null && !con.proxy().proxyless()
                && SecretGenerator.watches(con.proxy(), sds.names(), request.configsUpdated())) {
            out.add(new Affected(sds, null));
        }
        return out;
    }

    @Override
    public void close() {
        queue.close();
        debouncer.shutdownNow();
        workers.shutdownNow();
    }
}
