package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.meshpilot.grpc.CallPeer;
import io.meshpilot.model.Proxy;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code envoy.service.discovery.v3.AggregatedDiscoveryService}: one stream per proxy. The
 * first request must carry the node; every request is either an ACK, a NACK (recorded, not
 * answered: the same version is never re-sent in a loop), a stale nonce (ignored, as Envoy
 * expects), or a subscription (answered with the current resources). Delta streams track
 * per-resource versions and send only what changed, plus removals.
 */
final class AdsService extends AggregatedDiscoveryServiceGrpc.AggregatedDiscoveryServiceImplBase {
    private static final System.Logger LOG = System.getLogger(AdsService.class.getName());
    private final DiscoveryServer server;
    private final StreamRateLimiter limiter;
    private final AtomicLong ids = new AtomicLong();

    AdsService(DiscoveryServer server, StreamRateLimiter limiter) {
        this.server = server;
        this.limiter = limiter;
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
        String peer = CallPeer.current().map(p -> String.valueOf(p.remoteAddress())).orElse("");
        return new StreamObserver<>() {
            private Connection connection;
            private boolean failed;

            @Override
            public void onNext(DiscoveryRequest request) {
                if (failed) {
                    return;
                }
                if (connection == null) {
                    if (!server.ready()) {
                        fail(Status.UNAVAILABLE.withDescription("server is not ready to serve discovery information"));
                        return;
                    }
                    Status refused = admit();
                    if (refused != null) {
                        fail(refused);
                        return;
                    }
                    if (!request.hasNode() || request.getNode().getId().isEmpty()) {
                        fail(Status.INVALID_ARGUMENT.withDescription("the first request of a stream must carry the node"));
                        return;
                    }
                    Proxy proxy;
                    try {
                        proxy = Proxy.fromNode(request.getNode());
                    } catch (IllegalArgumentException e) {
                        fail(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
                        return;
                    }
                    connection = new Connection(proxy.id() + "-" + ids.incrementAndGet(), proxy, peer, out);
                    server.connected(connection);
                }
                try {
                    server.process(connection, request);
                } catch (RuntimeException e) {
                    LOG.log(Level.ERROR, "xDS request failed proxy=" + connection.proxy().id() + " type="
                            + request.getTypeUrl(), e);
                    fail(Status.INTERNAL.withDescription("cannot answer " + request.getTypeUrl() + ": " + e.getMessage()));
                }
            }

            private void fail(Status status) {
                failed = true;
                if (connection != null) {
                    server.disconnected(connection);
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
                    server.disconnected(connection);
                }
            }

            @Override
            public void onCompleted() {
                if (connection != null) {
                    server.disconnected(connection);
                    connection.close();
                } else {
                    out.onCompleted();
                }
            }
        };
    }

    @Override
    public StreamObserver<DeltaDiscoveryRequest> deltaAggregatedResources(StreamObserver<DeltaDiscoveryResponse> out) {
        String peer = CallPeer.current().map(p -> String.valueOf(p.remoteAddress())).orElse("");
        return new StreamObserver<>() {
            private Connection connection;
            private boolean failed;

            @Override
            public void onNext(DeltaDiscoveryRequest request) {
                if (failed) {
                    return;
                }
                if (connection == null) {
                    if (!server.ready()) {
                        fail(Status.UNAVAILABLE.withDescription("server is not ready to serve discovery information"));
                        return;
                    }
                    Status refused = admit();
                    if (refused != null) {
                        fail(refused);
                        return;
                    }
                    if (!request.hasNode() || request.getNode().getId().isEmpty()) {
                        fail(Status.INVALID_ARGUMENT.withDescription("the first request of a stream must carry the node"));
                        return;
                    }
                    try {
                        Proxy proxy = Proxy.fromNode(request.getNode());
                        connection = new Connection(proxy.id() + "-" + ids.incrementAndGet(), proxy, peer, out, true);
                    } catch (IllegalArgumentException e) {
                        fail(Status.INVALID_ARGUMENT.withDescription(e.getMessage()));
                        return;
                    }
                    server.connected(connection);
                }
                try {
                    server.processDelta(connection, request);
                } catch (RuntimeException e) {
                    LOG.log(Level.ERROR, "delta xDS request failed proxy=" + connection.proxy().id(), e);
                    fail(Status.INTERNAL.withDescription("cannot answer " + request.getTypeUrl() + ": " + e.getMessage()));
                }
            }

            private void fail(Status status) {
                failed = true;
                if (connection != null) {
                    server.disconnected(connection);
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
                    server.disconnected(connection);
                }
            }

            @Override
            public void onCompleted() {
                if (connection != null) {
                    server.disconnected(connection);
                    connection.close();
                } else {
                    out.onCompleted();
                }
            }
        };
    }
}
