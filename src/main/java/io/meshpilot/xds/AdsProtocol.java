package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.config.core.v3.ControlPlane;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.grpc.Status;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushRequest;
import io.meshpilot.monitoring.IstioCounter;
import io.meshpilot.security.DebugAuthorizer;
import io.meshpilot.util.PrintableText;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The xDS protocol side of the DiscoveryServer (istiod's ads.go and delta.go): each request
 * on a stream is a debug request, a NACK, an unsubscription, a subscription that starts (a
 * new stream, or a proxy reconnecting with the nonce another replica sent it), an expired
 * nonce, or an ACK, which may change the subscription; what must be answered is answered, and
 * a push sent, as a state-of-the-world or a delta response built from the connection's
 * generator.
 */
final class AdsProtocol {
    private static final System.Logger LOG = System.getLogger(AdsProtocol.class.getName());
    static final IstioCounter XDS_PUSHES = IstioCounter.of("pilot_xds_pushes", "type",
            "Pilot build and send errors for lds, rds, cds and eds.");
    static final IstioCounter XDS_REJECTS = IstioCounter.of("pilot_total_xds_rejects", "type",
            "Total number of XDS responses from pilot rejected by proxy.");

    private final ConnectionTable connections;
    private final Generators generators;
    private final XdsCache cache;
    private final SharedResponses shared;
    private final Supplier<PushContext> current;
    private final StreamLimits limits;
    private final DebugAuthorizer debugAuthorizer;
    private final ControlPlane controlPlane;
    private final SubscribedNames.Pool subscriptions = new SubscribedNames.Pool();

    /**
     * @param current the PushContext in force, what a subscription is answered from
     * @param limits  what one stream may make us hold; a request past them ends its stream
     *                ({@link StreamLimits.Exceeded})
     * @param debugAuthorizer who may read what of the debug types (a refused stream ends Unauthenticated)
     * @param controlPlane    who answers, sent with every istio.io/debug/syncz answer (istioctl's ISTIOD column)
     */
    AdsProtocol(ConnectionTable connections, Generators generators, XdsCache cache, SharedResponses shared,
                Supplier<PushContext> current, StreamLimits limits, DebugAuthorizer debugAuthorizer,
                ControlPlane controlPlane) {
        this.connections = connections;
        this.generators = generators;
        this.cache = cache;
        this.shared = shared;
        this.current = current;
        this.limits = limits;
        this.debugAuthorizer = debugAuthorizer;
        this.controlPlane = controlPlane;
    }

    private void rejected(Connection con, String type, int code) {
        String metricType = TypeUrls.metricType(type);
        XDS_REJECTS.increment(metricType);
        if (switch (metricType) { case "lds", "rds", "cds", "eds" -> true; default -> false; }) {
            connections.rejected(con, metricType, code);
        }
    }

    /**
     * One request on a state-of-the-world stream, by istiod's rules (ads.go processRequest,
     * pkg/xds ShouldRespond): a debug type is answered at once; a NACK is recorded; a request
     * naming nothing of a type that cannot be a wildcard unsubscribes; a type the stream has
     * no state for, or a request without a nonce, starts the subscription and is answered
     * whatever nonce it carries (a proxy reconnecting to another replica repeats the last one
     * it saw); otherwise a nonce that is not the last one sent has expired, and an ACK is
     * answered only when it subscribes to something new. The names of a type nobody serves
     * are not kept: its answer is empty whatever they are.
     */
    void process(Connection con, DiscoveryRequest req) {
        String type = req.getTypeUrl();
        limits.checkTypeUrl(type);
        // istiod's ads scope logs every request at debug (ADS:<type>: REQ ...)
        LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": REQ " + con.id() + " resources:"
                + req.getResourceNamesCount() + " nonce:" + req.getResponseNonce() + " version:" + req.getVersionInfo());
        if (type.equals(TypeUrls.HEALTH_INFO)) {
            healthReported(con, req.hasErrorDetail());
            return;
        }
        if (TypeUrls.isDebug(type)) {
            answerDebug(con, type, req.getResourceNamesList());
            return;
        }
        Connection.Watch w = con.existingWatch(type);
        if (req.hasErrorDetail()) {
            nacked(con, w, type, req.getErrorDetail().getCode(), req.getErrorDetail().getMessage());
            return;
        }
        List<String> requested = serves(con, type) ? req.getResourceNamesList() : List.of();
        limits.checkSubscription(type, requested);
        limits.checkName(type, req.getVersionInfo());
        limits.checkName(type, req.getResponseNonce());
        if (requested.isEmpty() && !TypeUrls.wildcardType(type)) {
            LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": UNSUBSCRIBE " + con.id());
            con.unwatch(type);
            return;
        }
        String nonce = req.getResponseNonce();
        if (nonce.isEmpty() || w == null) {
            LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": INIT/RECONNECT " + con.id()
                    + " version:" + req.getVersionInfo() + " nonce:" + nonce);
            if (w == null) {
                limits.checkNewType(con.watchCount());
            }
            w = con.watch(type);
            w.restart(subscriptions.of(requested), sotwWildcard(type, requested));
            if (type.equals(TypeUrls.CLUSTER)) {
                Connection.Watch eds = con.existingWatch(TypeUrls.ENDPOINT);
                if (eds != null) {
                    eds.alwaysRespond = true; // Envoy warms the clusters it gets with the next EDS answer
                }
            }
            push(con, w, current.get());
            return;
        }
        if (!nonce.equals(w.nonceSent)) {
            expired(con, type, nonce, w);
            return;
        }
        w.acked(nonce, req.getVersionInfo());
        boolean alwaysRespond = w.takeAlwaysRespond();
        SubscribedNames previous = w.names;
        boolean changed = !previous.sameAs(requested);
        boolean added = false;
        if (changed) {
            added = requested.stream().anyMatch(n -> !previous.contains(n));
            w.names = subscriptions.of(requested);
            w.wildcard = sotwWildcard(type, requested);
        }
        // names only dropped from a subscription that cannot be a wildcard need no answer
        if (alwaysRespond || added || changed && TypeUrls.wildcardType(type)) {
            push(con, w, current.get());
        }
    }

    /** Whether a state-of-the-world subscription to {@code names} asks for every resource of the type. */
    private static boolean sotwWildcard(String type, List<String> names) {
        return names.isEmpty() && emptyMeansEverything(type) || names.contains("*");
    }

    /** Envoy's legacy wildcard: a first LDS or CDS subscription naming nothing asks for every resource. */
    private static boolean emptyMeansEverything(String type) {
        return type.equals(TypeUrls.LISTENER) || type.equals(TypeUrls.CLUSTER);
    }

    /**
     * One request on a delta stream, by istiod's rules (delta.go processDeltaRequest,
     * shouldRespondDelta): a debug type is answered at once; a NACK is recorded; a type the
     * stream has no state for starts the subscription (its names, plus those the proxy says it
     * holds; naming nothing of a type that may be a wildcard, everything) and is answered
     * whatever nonce it carries; otherwise a nonce that is not the last
     * one sent has expired, and a request (ACK or not) is answered only when it changes the
     * subscription.
     */
    void processDelta(Connection con, DeltaDiscoveryRequest req) {
        String type = req.getTypeUrl();
        limits.checkTypeUrl(type);
        LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": REQ " + con.id() + " resources sub:"
                + req.getResourceNamesSubscribeCount() + " unsub:" + req.getResourceNamesUnsubscribeCount()
                + " nonce:" + req.getResponseNonce());
        if (type.equals(TypeUrls.HEALTH_INFO)) {
            healthReported(con, req.hasErrorDetail());
            return;
        }
        if (TypeUrls.isDebug(type)) {
            answerDebug(con, type, req.getResourceNamesSubscribeList());
            return;
        }
        Connection.Watch w = con.existingWatch(type);
        if (req.hasErrorDetail()) {
            nacked(con, w, type, req.getErrorDetail().getCode(), req.getErrorDetail().getMessage());
            if (w != null) {
                w.forgetRejected(req.getResponseNonce());
            }
            return;
        }
        boolean served = serves(con, type);
        if (served) {
            checkNames(type, req);
        }
        if (w == null) {
            LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": INIT/RECONNECT " + con.id()
                    + " nonce:" + req.getResponseNonce() + " resources:" + req.getInitialResourceVersionsCount());
            limits.checkNewType(con.watchCount());
            Set<String> names = new HashSet<>();
            boolean wildcard = false;
            if (served) {
                names.addAll(req.getResourceNamesSubscribeList());
                names.addAll(req.getInitialResourceVersionsMap().keySet()); // what the proxy holds, it still watches
                req.getResourceNamesUnsubscribeList().forEach(names::remove);
                // istiod's deltaWatchedResources: a first request subscribing to nothing asks for everything
                // (ztunnel's Authorization subscription); "*" subscribed and unsubscribed at once asks for nothing
                wildcard = names.remove("*") || req.getResourceNamesSubscribeCount() == 0 && TypeUrls.wildcardType(type);
                limits.checkSubscription(type, names);
            }
            w = con.watch(type);
            if (addressGenerator(con, type) != null) {
                // ztunnel's wildcard watch keeps no names (istiod elides them); the request's are answered once
                w.restart(wildcard ? SubscribedNames.EMPTY : subscriptions.of(names), wildcard);
                w.keepsHeld = false;
                pushAddresses(con, w, new AddressGenerator.Ask(names, req.getInitialResourceVersionsMap()), Set.of());
                return;
            }
            w.restart(subscriptions.of(names), wildcard);
            if (served) {
                w.held.putAll(req.getInitialResourceVersionsMap());
            }
            push(con, w, current.get());
            return;
        }
        String nonce = req.getResponseNonce();
        if (!nonce.isEmpty() && !nonce.equals(w.nonceSent)) {
            expired(con, type, nonce, w);
            return;
        }
        if (!nonce.isEmpty()) {
            w.acked(nonce, w.versionSent);
        }
        boolean wasWildcard = w.wildcard;
        boolean changed = served
                && (req.getResourceNamesSubscribeCount() > 0 || req.getResourceNamesUnsubscribeCount() > 0)
                && resubscribe(w, req.getResourceNamesSubscribeList(), req.getResourceNamesUnsubscribeList());
        if (changed && addressGenerator(con, type) != null) {
            if (w.wildcard) {
                w.names = SubscribedNames.EMPTY;
            }
            // istiod answers the names this request subscribes (all of them when it became a wildcard)
            Set<String> asked = new HashSet<>(req.getResourceNamesSubscribeList());
            asked.remove("*");
            pushAddresses(con, w, new AddressGenerator.Ask(w.wildcard && !wasWildcard ? Set.of() : asked, Map.of()),
                    Set.of());
            return;
        }
        if (w.takeAlwaysRespond() || changed) {
            push(con, w, current.get());
        }
    }

    /** The Address generator when it serves {@code type} to this delta stream, else null. */
    private AddressGenerator addressGenerator(Connection con, String type) {
        return con.delta() && generators.forType(type, con.proxy()) instanceof AddressGenerator g ? g : null;
    }

    /**
     * Answers a ztunnel's Address request ({@code ask}) or pushes the addresses a push request
     * changed ({@code updated}, with {@code ask} null); on-demand watches grow by what is sent.
     */
    private void pushAddresses(Connection con, Connection.Watch w, AddressGenerator.Ask ask, Set<String> updated) {
        long start = System.nanoTime();
        AddressGenerator g = addressGenerator(con, w.typeUrl());
        AddressGenerator.Delta delta = g.generateDelta(con.proxy(), w.wildcard, w.names(), ask, updated);
        if (!delta.respond()) {
            return;
        }
        if (delta.subscribed() != null) {
            w.names = subscriptions.of(delta.subscribed());
        }
        con.sendDelta(w, delta.response(current.get().version()));
        // istiod's pushDeltaXds times every answer it sends, the first and on-demand ones included
        XdsMetrics.PUSH_TIME.record(TypeUrls.metricType(w.typeUrl()), Duration.ofNanos(System.nanoTime() - start));
    }

    /**
     * The agent reports its workload's health (unhealthy: the request carries an error). istiod
     * applies it to auto-registered WorkloadEntries; there are none here (WorkloadGroup is not
     * applied), so it is only logged. Never a watch, an answer or a rejection.
     */
    private static void healthReported(Connection con, boolean unhealthy) {
        LOG.log(Level.DEBUG, () -> "ADS:hds: health report " + con.id() + (unhealthy ? " unhealthy" : " healthy"));
    }

    /** Applies a delta request's subscribe and unsubscribe lists ("*" is the wildcard); whether they changed anything. */
    private boolean resubscribe(Connection.Watch w, List<String> subscribe, List<String> unsubscribe) {
        Set<String> names = new HashSet<>(w.names());
        names.addAll(subscribe);
        boolean wildcard = names.remove("*") || w.wildcard;
        for (String n : unsubscribe) {
            names.remove(n);
            w.held.remove(n);
            wildcard &= !n.equals("*");
        }
        if (wildcard == w.wildcard && names.equals(w.names())) {
            return false;
        }
        limits.checkSubscription(w.typeUrl(), names);
        w.names = subscriptions.of(names);
        w.wildcard = wildcard;
        return true;
    }

    /** Whether a generator serves {@code type} to this stream. */
    private boolean serves(Connection con, String type) {
        return generators.forType(type, con.proxy()) != null;
    }

    /** Every name, version and nonce a delta request sends; the resulting subscription is checked where it is made. */
    private void checkNames(String type, DeltaDiscoveryRequest req) {
        limits.checkName(type, req.getResponseNonce());
        req.getResourceNamesSubscribeList().forEach(n -> limits.checkName(type, n));
        req.getResourceNamesUnsubscribeList().forEach(n -> limits.checkName(type, n));
        req.getInitialResourceVersionsMap().forEach((n, version) -> {
            limits.checkName(type, n);
            limits.checkName(type, version);
        });
    }

    /**
     * A NACK: recorded on the type's watch whatever its nonce (istiod records every one; the
     * next ACK clears it) and never answered: the same version is not sent again in a loop.
     */
    private void nacked(Connection con, Connection.Watch w, String type, int code, String error) {
        rejected(con, type, code);
        String message = limits.errorMessage(error);
        LOG.log(Level.WARNING, "xDS NACK" + (con.delta() ? " (delta)" : "") + " proxy=" + con.proxy().id()
                + " type=" + TypeUrls.shortName(type) + " version=" + (w == null ? "" : w.versionSent)
                + " error=" + message);
        if (w != null) {
            w.nackError = message;
            w.nackVersion = w.versionSent;
        }
    }

    /** A request answering a response that is not the last one sent: ignored, as Envoy expects. */
    private static void expired(Connection con, String type, String nonce, Connection.Watch w) {
        LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": REQ " + con.id() + " Expired nonce received "
                + nonce + ", sent " + w.nonceSent);
        XdsMetrics.EXPIRED_NONCE.increment(TypeUrls.metricType(type));
    }

    /**
     * A debug type's answer, generated now for this request and recorded nowhere (istiod starts
     * no watch for it); on a delta stream the same resources as delta resources. istiod's
     * pushXds identifies the control plane on syncz answers only.
     */
    private void answerDebug(Connection con, String type, List<String> names) {
        PushContext push = current.get();
        DiscoveryResponse answer = sotwResponse(con.proxy(), debugGenerator(con, type, push), type,
                SubscribedNames.of(names), names.isEmpty(), push, cache, shared);
        boolean identified = type.equals(TypeUrls.DEBUG_SYNCZ);
        if (!con.delta()) {
            con.sendDebug(identified ? answer.toBuilder().setControlPlane(controlPlane).build() : answer);
            return;
        }
        var delta = DeltaDiscoveryResponse.newBuilder()
                .setTypeUrl(type)
                .setSystemVersionInfo(answer.getVersionInfo())
                .setNonce(answer.getNonce())
                .addAllResources(answer.getResourcesList().stream().map(AdsProtocol::resource).toList());
        if (identified) {
            delta.setControlPlane(controlPlane);
        }
        con.sendDeltaDebug(delta.build());
    }

    /**
     * The generator of a debug type for what the stream's verified identity may read (istiod's
     * StatusGen): a stream without one is ended Unauthenticated, as istiod ends it. The generic
     * istio.io/debug type is istiod's DebugGen, which decides itself ({@link DebugPageGenerator}).
     */
    private Generator debugGenerator(Connection con, String type, PushContext push) {
        if (type.equals(TypeUrls.DEBUG_PAGE)) {
            return generators.forConnection(type, con); // istiod's DebugGen authorizes by its own rules
        }
        return switch (debugAuthorizer.decideXdsDebug(con.identities(), push.rootNamespace())) {
            case DebugAuthorizer.Decision.Everything everything -> generators.forConnection(type, con);
            case DebugAuthorizer.Decision.OwnNamespace own ->
                    generators.forDebugOfNamespace(type, con.proxy(), own.namespace());
            case DebugAuthorizer.Decision.Forbidden forbidden ->
                    throw Status.UNAUTHENTICATED.withDescription(forbidden.reason()).asRuntimeException();
        };
    }

    private static Resource resource(Any a) {
        return Resource.newBuilder().setName(ResourceNames.of(a)).setVersion(ResourceNames.version(a)).setResource(a)
                .build();
    }

    /**
     * Pushes one type for one connection because of {@code request}: the Address type only what
     * the request changed, every other type as {@link #push(Connection, Connection.Watch, PushContext)}.
     */
    void push(Connection con, Connection.Watch w, PushContext push, PushRequest request) {
        if (addressGenerator(con, w.typeUrl()) != null) {
            pushAddresses(con, w, null, request.addressesUpdated());
            return;
        }
        push(con, w, push);
    }

    /** Generates one type for one connection and sends it. */
    void push(Connection con, Connection.Watch w, PushContext push) {
        long start = System.nanoTime();
        if (con.delta()) {
            pushDelta(con, w, push);
        } else {
            pushSotw(con, w, push);
        }
        XdsMetrics.PUSH_TIME.record(TypeUrls.metricType(w.typeUrl()), Duration.ofNanos(System.nanoTime() - start));
    }

    private void pushSotw(Connection con, Connection.Watch w, PushContext push) {
        Generator g = generators.forConnection(w.typeUrl(), con); // SDS is bound to the stream's identities
        Supplier<DiscoveryResponse> full = () -> sotwResponse(con.proxy(), g, w.typeUrl(), w.names(), w.wildcard(), push,
                cache, shared);
        if (w.typeUrl().equals(TypeUrls.ENDPOINT)) {
            con.sendEndpoints(w, full); // ordered with partial EDS responses (Connection#sendChangedEndpoints)
        } else {
            con.send(w, full.get());
        }
    }

    /**
     * An endpoint-only push (istiod's incremental EDS push, eds.go canSendPartialFullPushes): a
     * state-of-the-world stream gets the assignments of the {@code changed} clusters only, as
     * istiod sends them; a delta stream what changed, as always.
     */
    void pushChangedEndpoints(Connection con, Connection.Watch w, PushContext push, Set<String> changed) {
        if (con.delta()) {
            push(con, w, push);
            return;
        }
        long start = System.nanoTime();
        Generator g = generators.forConnection(w.typeUrl(), con);
        con.sendChangedEndpoints(w, changed,
                names -> sotwResponse(con.proxy(), g, w.typeUrl(), names, false, push, cache, shared),
                () -> sotwResponse(con.proxy(), g, w.typeUrl(), w.names(), w.wildcard(), push, cache, shared));
        XdsMetrics.PUSH_TIME.record(TypeUrls.metricType(w.typeUrl()), Duration.ofNanos(System.nanoTime() - start));
    }

    /** Delta: only resources whose version the proxy does not hold, plus what no longer exists. */
    private void pushDelta(Connection con, Connection.Watch w, PushContext push) {
        Generator g = generators.forConnection(w.typeUrl(), con);
        List<Any> resources = g == null ? List.of() : g.generate(con.proxy(), push, w.names(), w.wildcard());
        var response = DeltaDiscoveryResponse.newBuilder()
                .setTypeUrl(w.typeUrl())
                .setSystemVersionInfo(Long.toString(push.version()))
                .setNonce(UUID.randomUUID().toString());
        Set<String> present = new HashSet<>();
        for (Any a : resources) {
            Resource r = resource(a);
            present.add(r.getName());
            if (!r.getVersion().equals(w.held.get(r.getName()))) {
                response.addResources(r);
            }
        }
        Set<String> gone = new TreeSet<>(w.held.keySet());
        if (!w.wildcard()) {
            gone.addAll(w.names()); // subscribed names that do not exist are reported removed
        }
        gone.removeAll(present);
        response.addAllRemovedResources(gone);
        con.sendDelta(w, response.build());
    }

    /**
     * The state-of-the-world response for one watch of one proxy, from generator {@code g}
     * (null: a type nobody serves). A {@link ScopedGenerator}'s response is shared by every
     * proxy of the scope it names. Static over the cache and shared responses it is given so
     * that the sidecar translation benchmark (test helper {@code io.meshpilot.xds.SidecarXds})
     * measures exactly the path a push takes.
     */
    static DiscoveryResponse sotwResponse(Proxy proxy, Generator g, String typeUrl, Set<String> names, boolean wildcard,
                                          PushContext push, XdsCache cache, SharedResponses shared) {
        if (g instanceof ScopedGenerator scoped) {
            var key = new SharedResponses.Key(typeUrl, push.version(), cache.endpointGeneration(),
                    scoped.responseScope(proxy, push, wildcard), proxy.proxyless(), wildcard, names);
            return shared.get(key, () -> response(typeUrl, push, g.generate(proxy, push, names, wildcard)));
        }
        List<Any> resources;
        if (g == null) {
            LOG.log(Level.INFO, "unknown xDS type answered empty proxy=" + proxy.id() + " type="
                    + PrintableText.clip(typeUrl, 256));
            resources = List.of();
        } else {
            resources = g.generate(proxy, push, names, wildcard);
        }
        return response(typeUrl, push, resources);
    }

    private static DiscoveryResponse response(String typeUrl, PushContext push, List<Any> resources) {
        return DiscoveryResponse.newBuilder()
                .setTypeUrl(typeUrl)
                .setVersionInfo(Long.toString(push.version()))
                .setNonce(UUID.randomUUID().toString())
                .addAllResources(resources)
                .build();
    }
}
