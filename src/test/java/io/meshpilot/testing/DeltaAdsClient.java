package io.meshpilot.testing;

import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A bare delta ADS client speaking the Envoy v3 protocol to a server under test: the node
 * goes on the first request; responses are queued in order, and the stream's end is kept.
 */
public final class DeltaAdsClient implements AutoCloseable {
    private final ManagedChannel channel;
    private final LinkedBlockingQueue<DeltaDiscoveryResponse> responses = new LinkedBlockingQueue<>();
    private final StreamObserver<DeltaDiscoveryRequest> requests;
    private final Node node;
    /** How the server ended the stream. */
    private final CompletableFuture<Throwable> failure = new CompletableFuture<>();
    private boolean first = true;

    /** A sidecar of namespace {@code default} with node id {@code nodeId}, over plaintext to {@code port}. */
    public DeltaAdsClient(int port, String nodeId) {
        this(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build(), Node.newBuilder().setId(nodeId)
                .setMetadata(Struct.newBuilder().putFields("NAMESPACE", Value.newBuilder().setStringValue("default").build()))
                .build());
    }

    /** As {@code node} over {@code channel} (e.g. TLS with a token on every call); closed with the client. */
    public DeltaAdsClient(ManagedChannel channel, Node node) {
        this.channel = channel;
        this.node = node;
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel).deltaAggregatedResources(new StreamObserver<>() {
            @Override
            public void onNext(DeltaDiscoveryResponse r) {
                responses.add(r);
            }

            @Override
            public void onError(Throwable t) {
                failure.complete(t);
            }

            @Override
            public void onCompleted() {
            }
        });
    }

    /** Sends {@code b}, with the node when it is the stream's first request. */
    public synchronized void send(DeltaDiscoveryRequest.Builder b) {
        if (first) {
            b.setNode(node);
            first = false;
        }
        requests.onNext(b.build());
    }

    /** The next response, or null after {@code timeout}. */
    public DeltaDiscoveryResponse next(Duration timeout) throws InterruptedException {
        return responses.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void ack(DeltaDiscoveryResponse r) {
        send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setResponseNonce(r.getNonce()));
    }

    /** Rejects {@code r} as ztunnel and Envoy do: its nonce with an error detail (code 3, INVALID_ARGUMENT). */
    public void nack(DeltaDiscoveryResponse r, String message) {
        send(DeltaDiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setResponseNonce(r.getNonce())
                .setErrorDetail(Status.newBuilder().setCode(3).setMessage(message)));
    }

    /** Waits for the stream to fail; returns the failure or null. */
    public Throwable awaitError(Duration timeout) throws InterruptedException {
        try {
            return failure.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            return null;
        } catch (ExecutionException e) {
            throw new IllegalStateException("never completed exceptionally", e);
        }
    }

    @Override
    public void close() {
        try {
            requests.onCompleted();
        } catch (RuntimeException e) {
            // already closed
        }
        channel.shutdownNow();
    }
}
