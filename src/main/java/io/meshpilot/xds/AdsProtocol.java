package io.meshpilot.xds;

import com.google.protobuf.Any;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.Resource;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.PushContext;
import io.meshpilot.monitoring.IstioCounter;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * The xDS protocol side of the DiscoveryServer (istiod's ads.go and delta.go): each request
 * on a stream is an ACK, a NACK, a stale nonce or a subscription change; a subscription is
 * answered, and a push sent, as a state-of-the-world or a delta response built from the
 * connection's generator.
 */
final class AdsProtocol {
    private static final System.Logger LOG = System.getLogger(DiscoveryServer.class.getName());
    static final IstioCounter XDS_PUSHES = IstioCounter.of("pilot_xds_pushes", "type",
            "Pilot build and send errors for lds, rds, cds and eds.");
    static final IstioCounter XDS_REJECTS = IstioCounter.of("pilot_total_xds_rejects", "type",
            "Total number of XDS responses from pilot rejected by proxy.");

    private final ConnectionTable connections;
    private final Generators generators;
    private final XdsCache cache;
    private final SharedResponses shared;
    private final Supplier<PushContext> current;
    private final SubscribedNames.Pool subscriptions = new SubscribedNames.Pool();

    /**
     * @param current the PushContext in force, what a subscription is answered from
     */
    AdsProtocol(ConnectionTable connections, Generators generators, XdsCache cache, SharedResponses shared,
                Supplier<PushContext> current) {
        this.connections = connections;
        this.generators = generators;
        this.cache = cache;
        this.shared = shared;
        this.current = current;
    }

    private void rejected(Connection con, String type, int code) {
        String metricType = TypeUrls.metricType(type);
        XDS_REJECTS.increment(metricType);
        if (switch (metricType) { case "lds", "rds", "cds", "eds" -> true; default -> false; }) {
            connections.rejected(con, metricType, code);
        }
    }

    /** One request on a stream: ACK, NACK, stale nonce, or a subscription to answer. */
    void process(Connection con, DiscoveryRequest req) {
        String type = req.getTypeUrl();
        // istiod's ads scope logs every request at debug (ADS:<type>: REQ ...)
        LOG.log(Level.DEBUG, () -> "ADS:" + TypeUrls.shortName(type) + ": REQ " + con.id() + " resources:"
                + req.getResourceNamesCount() + " nonce:" + req.getResponseNonce() + " version:" + req.getVersionInfo());
        Connection.Watch w = con.watch(type);
        if (!req.getResponseNonce().isEmpty()) {
            if (!req.getResponseNonce().equals(w.nonceSent)) {
                LOG.log(Level.DEBUG, () -> "stale nonce ignored proxy=" + con.proxy().id() + " type=" + type);
                XdsMetrics.EXPIRED_NONCE.increment(TypeUrls.metricType(type));
                return;
            }
            if (req.hasErrorDetail()) {
                w.nackError = req.getErrorDetail().getMessage();
                w.nackVersion = w.versionSent;
                rejected(con, type, req.getErrorDetail().getCode());
                LOG.log(Level.WARNING, "xDS NACK proxy=" + con.proxy().id() + " type=" + TypeUrls.shortName(type)
                        + " version=" + w.versionSent + " error=" + w.nackError);
                return; // not re-sent: the next change brings a new version
            }
            w.nonceAcked = req.getResponseNonce();
            w.versionAcked = req.getVersionInfo();
            w.nackError = "";
            if (w.names.sameAs(req.getResourceNamesList())) {
                return; // a plain ACK: the subscription did not change
            }
        }
        SubscribedNames names = subscriptions.of(req.getResourceNamesList());
        w.names = names;
        w.wildcard = names.isEmpty() && (type.equals(TypeUrls.LISTENER) || type.equals(TypeUrls.CLUSTER))
                || names.contains("*");
        push(con, w, current.get());
    }

    /**
     * One request on a delta stream: subscription changes (subscribe, unsubscribe, "*"),
     * initial versions the proxy already holds, then ACK/NACK as for state of the world.
     */
    void processDelta(Connection con, DeltaDiscoveryRequest req) {
        String type = req.getTypeUrl();
        boolean known = con.watches().containsKey(type);
        Connection.Watch w = con.watch(type);
        if (!req.getResponseNonce().isEmpty()) {
            if (!req.getResponseNonce().equals(w.nonceSent)) {
                XdsMetrics.EXPIRED_NONCE.increment(TypeUrls.metricType(type));
                return; // stale
            }
            if (req.hasErrorDetail()) {
                w.nackError = req.getErrorDetail().getMessage();
                w.nackVersion = w.versionSent;
                rejected(con, type, req.getErrorDetail().getCode());
                LOG.log(Level.WARNING, "xDS NACK (delta) proxy=" + con.proxy().id() + " type="
                        + TypeUrls.shortName(type) + " error=" + w.nackError);
                return;
            }
            w.nonceAcked = req.getResponseNonce();
            w.versionAcked = w.versionSent;
            w.nackError = "";
            if (req.getResourceNamesSubscribeCount() == 0 && req.getResourceNamesUnsubscribeCount() == 0) {
                return;
            }
        }
        Set<String> names = new HashSet<>(w.names());
        names.addAll(req.getResourceNamesSubscribeList());
        req.getResourceNamesUnsubscribeList().forEach(n -> {
            names.remove(n);
            w.held.remove(n);
        });
        if (!known) {
            w.held.putAll(req.getInitialResourceVersionsMap());
            w.wildcard = req.getResourceNamesSubscribeCount() == 0
                    && (type.equals(TypeUrls.LISTENER) || type.equals(TypeUrls.CLUSTER));
        }
        if (names.remove("*")) {
            w.wildcard = true;
        }
        if (req.getResourceNamesUnsubscribeList().contains("*")) {
            w.wildcard = false;
        }
        w.names = subscriptions.of(names);
        push(con, w, current.get());
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
        con.send(w, sotwResponse(con.proxy(), g, w.typeUrl(), w.names(), w.wildcard(), push, cache, shared));
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
            String name = ResourceNames.of(a);
            String version = ResourceNames.version(a);
            present.add(name);
            if (!version.equals(w.held.get(name))) {
                response.addResources(Resource.newBuilder().setName(name).setVersion(version).setResource(a));
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
            LOG.log(Level.INFO, "unknown xDS type answered empty proxy=" + proxy.id() + " type=" + typeUrl);
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
