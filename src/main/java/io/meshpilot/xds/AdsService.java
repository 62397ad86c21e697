package io.meshpilot.xds;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.meshpilot.grpc.CallHeaders;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.grpc.TransportConnection;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.WaypointServices;
import io.meshpilot.security.Authenticator;
import io.meshpilot.security.Authenticators;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiConsumer;
import java.util.function.BooleanSupplier;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * {@code envoy.service.discovery.v3.AggregatedDiscoveryService}: one stream per proxy. The
 * first request must carry the node; every request then goes to {@link AdsProtocol}, which
 * answers it or not by istiod's nonce and ACK rules. Delta streams track per-resource
 * versions and send only what changed, plus removals.
 */
final class AdsService extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase {
    private static final System.Logger LOG = System.getLogger(AdsService.class.getName());
    /** Whether the first PushContext exists: streams are refused before. */
    private final BooleanSupplier ready;
    private final ConnectionTable connections;
    private final AdsProtocol protocol;
    private final StreamRateLimiter limiter;
    /** Null when XDS_AUTH is off: callers on the secure port are not authenticated. */
    private final Authenticators authenticators;
    private final AtomicLong ids = new AtomicLong();
    /** --clusterAliases: alias -> cluster ID, applied to the CLUSTER_ID a proxy reports. */
    private final Map<String, String> clusterAliases;
    /** The server's bound on response bytes in flight, shared by every stream's {@link Outbox}. */
    private final SendBudget budget;
    /** PILOT_XDS_SEND_TIMEOUT: how long a stream may stay unwritable. */
    private final Duration sendTimeout;
    /** PILOT_ENABLE_AMBIENT: without it ztunnel's streams are refused, as istiod's initConnection refuses them. */
    private final boolean ambient;

    AdsService(BooleanSupplier ready, ConnectionTable connections, AdsProtocol protocol,
               StreamRateLimiter limiter, Authenticators authenticators,
               Map<String, String> clusterAliases, SendBudget budget, Duration sendTimeout, boolean ambient) {
        this.ambient = ambient;
        this.clusterAliases = clusterAliases;
        this.budget = budget;
        this.sendTimeout = sendTimeout;
        this.ready = ready;
        this.connections = connections;
        this.protocol = protocol;
        this.limiter = limiter;
        this.authenticators = authenticators;
    }

    /**
     * XDS_AUTH on the secure port (istiod's authenticate + authorize): the caller must be
     * authenticated, and one of its identities must be of the proxy's namespace (and service
     * account, when the node names one). The plaintext port is not authenticated, as istiod's
     * 15010. Returns the refusal, or the caller's identities (none when not authenticated).
     */
    private Authorization authorize(CallPeer caller, CallHeaders headers, Proxy proxy) {
        if (authenticators == null || caller == null || !caller.secure()) {
            return new Authorization(null, List.of());
        }
        Authenticator.Caller who;
        try {
            who = authenticators.authenticate(caller, headers);
        } catch (Authenticator.AuthenticationException e) {
            LOG.log(Level.WARNING, "xDS authentication failed proxy=" + proxy.id() + " peer=" + caller.remoteAddress()
                    + ": " + e.getMessage());
            return new Authorization(Status.UNAUTHENTICATED.withDescription(e.getMessage()), List.of());
        }
        for (String id : who.identities()) {
            String[] p = id.replaceFirst("^spiffe://[^/]+/", "").split("/");
            if (p.length == 4 && p[0].equals("ns") && p[2].equals("sa") && p[1].equals(proxy.namespace())
                    && (proxy.serviceAccount().isEmpty() || p[3].equals(proxy.serviceAccount()))) {
                // istiod keeps the one identity that matched as the proxy's verified identity: SDS is
                // authorized against it alone, not against every SAN the certificate carries
                return new Authorization(null, List.of(id));
            }
        }
        LOG.log(Level.WARNING, "xDS authorization failed proxy=" + proxy.id() + " identities=" + who.identities());
        return new Authorization(Status.PERMISSION_DENIED.withDescription("authorization failed: no identity in "
                + who.identities() + " matches namespace " + proxy.namespace()
                + (proxy.serviceAccount().isEmpty() ? "" : " and service account " + proxy.serviceAccount())),
                who.identities());
    }

    /** The outcome of XDS_AUTH: a refusal, or go on with the caller's identities. */
    private record Authorization(Status denied, List<String> identities) {
    }

    /** istiod's new-stream admission; a refused stream gets RESOURCE_EXHAUSTED. */
    private Status admit() {
        try {
            return limiter.acquire() ? null
                    : Status.RESOURCE_EXHAUSTED.withDescription("request rate limit exceeded (PILOT_MAX_REQUESTS_PER_SECOND)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return Status.UNAVAILABLE.withDescription("interrupted");
        }
    }

    @Override
    public StreamObserver<DiscoveryRequest> streamAggregatedResources(StreamObserver<DiscoveryResponse> out) {
        Outbox outbox = outbox(out, "sotw-");
        return new Session<>(out, DiscoveryRequest::hasNode, DiscoveryRequest::getNode, DiscoveryRequest::getTypeUrl,
                (proxy, id, peer) -> new Connection(id, proxy, peer, out, outbox),
                protocol::process);
    }

    @Override
    public StreamObserver<DeltaDiscoveryRequest> deltaAggregatedResources(StreamObserver<DeltaDiscoveryResponse> out) {
        Outbox outbox = outbox(out, "delta-");
        return new Session<>(out, DeltaDiscoveryRequest::hasNode, DeltaDiscoveryRequest::getNode,
                DeltaDiscoveryRequest::getTypeUrl,
                (proxy, id, peer) -> new Connection(id, proxy, peer, out, outbox, true),
                protocol::processDelta);
    }

    /** The send queue of a stream starting now (its writer thread is named {@code prefix} and a number). */
    private Outbox outbox(StreamObserver<?> out, String prefix) {
        return new Outbox(out, TransportConnection.current(), prefix + ids.incrementAndGet(), budget, sendTimeout);
    }

    /** Makes the connection of a stream. */
    @FunctionalInterface
    private interface ConnectionFactory {
        Connection create(Proxy proxy, String id, String peer);
    }

    /**
     * One stream, SotW or delta: admission and the node on the first request, then every
     * request to the DiscoveryServer; any failure ends the stream with a status that says why.
     */
    private final class Session<Q, R> implements StreamObserver<Q> {
        private final StreamObserver<R> out;
        private final Predicate<Q> hasNode;
        private final Function<Q, Node> node;
        private final Function<Q, String> typeUrl;
        private final ConnectionFactory factory;
        private final BiConsumer<Connection, Q> process;
        private final String peer = CallPeer.current().map(p -> String.valueOf(p.remoteAddress())).orElse("");
        private final CallPeer caller = CallPeer.current().orElse(null);
        private final CallHeaders headers = CallPeer.currentHeaders();
        private Connection connection;
        private boolean failed;

        Session(StreamObserver<R> out, Predicate<Q> hasNode,
                Function<Q, Node> node,
                Function<Q, String> typeUrl, ConnectionFactory factory,
                BiConsumer<Connection, Q> process) {
            this.out = out;
            this.hasNode = hasNode;
            this.node = node;
            this.typeUrl = typeUrl;
            this.factory = factory;
            this.process = process;
        }

        @Override
        public void onNext(Q request) {
            if (failed) {
                return;
            }
            if (connection == null) {
                if (!ready.getAsBoolean()) {
                    fail(Status.UNAVAILABLE.withDescription("server is not ready to serve discovery information"));
                    return;
                }
                Status refused = admit();
                if (refused != null) {
                    fail(refused);
                    return;
                }
                if (!hasNode.test(request) || node.apply(request).getId().isEmpty()) {
                    fail(Status.INVALID_ARGUMENT.withDescription("the first request of a stream must carry the node"));
                    return;
                }
                try {
                    Proxy proxy = Proxy.fromNode(node.apply(request));
                    // istiod's initConnection: a proxy in an aliased cluster is in the cluster the alias names
                    String aliased = clusterAliases.get(proxy.clusterId());
                    if (aliased != null) {
                        proxy = proxy.withClusterId(aliased);
                    }
                    if (proxy.type() == Proxy.Type.ZTUNNEL && !ambient) {
                        // istiod returns a plain error here, which its gRPC server sends as Unknown
                        LOG.log(Level.WARNING, "xDS stream refused proxy=" + proxy.id() + " peer=" + peer
                                + ": ztunnel requires PILOT_ENABLE_AMBIENT=true");
                        fail(Status.UNKNOWN.withDescription("ztunnel requires PILOT_ENABLE_AMBIENT=true"));
                        return;
                    }
                    Authorization auth = authorize(caller, headers, proxy);
                    if (auth.denied() != null) {
                        fail(auth.denied());
                        return;
                    }
                    // istiod's connection id: its proxy ID (name.namespace) and a counter, what debug ?proxyID= matches
                    connection = factory.create(proxy, proxy.workloadId() + "-" + ids.incrementAndGet(), peer);
                    connection.authenticatedAs(auth.identities());
                } catch (IllegalArgumentException e) {
                    fail(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
                    return;
                }
                connections.connected(connection);
                warnIfUnboundWaypoint(connection.proxy());
            }
            try {
                process.accept(connection, request);
            } catch (StreamLimits.Exceeded e) {
                refuse(e.status());
            } catch (StatusRuntimeException e) { // a request the caller may not make (a debug type without identity)
                refuse(e.getStatus());
            } catch (RuntimeException e) {
                XdsMetrics.INTERNAL_ERRORS.increment();
                LOG.log(Level.ERROR, "xDS request failed proxy=" + connection.proxy().id() + " type="
                        + typeUrl.apply(request), e);
                fail(Status.INTERNAL.withDescription("cannot answer " + typeUrl.apply(request) + ": " + e.getMessage()));
            }
        }

        /** Ends the stream for what the caller asked: one line with the proxy, the connection and why. */
        private void refuse(Status status) {
            LOG.log(Level.WARNING, "xDS stream refused proxy=" + connection.proxy().id() + " connection="
                    + connection.id() + " peer=" + peer + ": " + status.getDescription());
            fail(status);
        }

        private void fail(Status status) {
            failed = true;
            if (connection != null) {
                connections.disconnected(connection);
                connection.end(status); // not while its send thread writes: the stream is not thread-safe
                return;
            }
            try {
                out.onError(status.asRuntimeException());
            } catch (RuntimeException e) {
                // stream already gone
            }
        }

        @Override
        public void onError(Throwable t) {
            if (connection != null) {
                connections.disconnected(connection);
                connection.abandon(); // the client is gone: what its writer holds of the budget goes back
            }
        }

        @Override
        public void onCompleted() {
            if (connection != null) {
                connections.disconnected(connection);
                connection.close();
            } else {
                out.onCompleted();
            }
        }
    }

    /**
     * A waypoint is known by its pod's gateway-name label (the {@code waypoint} template sets it);
     * a waypoint node without it gets HBONE termination but no service, which would otherwise go unsaid.
     */
    private static void warnIfUnboundWaypoint(Proxy proxy) {
        if (proxy.type() == Proxy.Type.WAYPOINT && WaypointServices.Waypoint.of(proxy).isEmpty()) {
            LOG.log(Level.WARNING, "waypoint proxy=" + proxy.id() + " has no " + WaypointServices.GATEWAY_NAME
                    + " label: it names no waypoint Gateway and serves no service");
        }
    }
}
