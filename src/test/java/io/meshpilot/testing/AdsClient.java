package io.meshpilot.testing;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.Struct;
import com.google.protobuf.Value;
import com.google.protobuf.util.JsonFormat;
import com.google.rpc.Status;
import io.envoyproxy.envoy.config.core.v3.Locality;
import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A bare ADS client (state of the world) speaking the Envoy v3 protocol to a server under
 * test: subscribe, ACK, NACK, and record every response, so tests can count pushes by type.
 */
public final class AdsClient implements AutoCloseable {
    private final ManagedChannel channel;
    private final StreamObserver<DiscoveryRequest> requests;
    private final LinkedBlockingQueue<DiscoveryResponse> responses = new LinkedBlockingQueue<>();
    private final List<DiscoveryResponse> all = new CopyOnWriteArrayList<>();
    private final Node node;
    private volatile Throwable error;
    /** When set, every response is answered at once: ACK, or NACK with this message when non-empty. */
    private volatile String autoAnswer;
    private volatile boolean completed;
    private boolean first = true;

    public AdsClient(int port, String nodeId, Map<String, String> metadata) {
        this(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build(), nodeId, metadata);
    }

    /** Over {@code channel} (e.g. TLS to the secure port with a workload certificate); closed with the client. */
    public AdsClient(ManagedChannel channel, String nodeId, Map<String, String> metadata) {
        this(channel, nodeId, metadata, Locality.getDefaultInstance());
    }

    /** With the node's locality, as the Istio agent sends the pod's region/zone/subzone. */
    public AdsClient(int port, String nodeId, Map<String, String> metadata, Locality locality) {
        this(NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build(), nodeId, metadata, locality);
    }

    private AdsClient(ManagedChannel channel, String nodeId, Map<String, String> metadata, Locality locality) {
        this.channel = channel;
        Struct.Builder md = Struct.newBuilder();
        // a JSON object (LABELS) is sent as a struct, as the Istio agent does; anything else as a string
        metadata.forEach((k, v) -> md.putFields(k, v.startsWith("{") ? structValue(v)
                : Value.newBuilder().setStringValue(v).build()));
        node = Node.newBuilder().setId(nodeId).setMetadata(md).setLocality(locality).build();
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(
                new ClientResponseObserver<DiscoveryRequest, DiscoveryResponse>() {
            @Override
            public void beforeStart(ClientCallStreamObserver<DiscoveryRequest> call) {
                call.setOnReadyHandler(AdsClient.this::readyChanged);
            }

            @Override
            public void onNext(DiscoveryResponse r) {
                all.add(r);
                responses.add(r);
                String answer = autoAnswer;
                if (answer != null) {
                    if (answer.isEmpty()) {
                        ack(r, List.of());
                    } else {
                        nack(r, List.of(), answer);
                    }
                }
            }

            @Override
            public void onError(Throwable t) {
                error = t;
                readyChanged();
            }

            @Override
            public void onCompleted() {
                completed = true;
            }
        });
    }

    private synchronized void readyChanged() {
        notifyAll();
    }

    /**
     * Waits (on gRPC's on-ready callback) until the transport takes another request without
     * buffering it, or the stream failed: a test that floods the server sends only then, so the
     * flood waits for the server instead of piling up in the client.
     */
    public synchronized void awaitReady() throws InterruptedException {
        while (!ready() && error == null) {
            wait();
        }
    }

    /** Sends a raw request (the node is added to the first one unless {@code withoutNode}). */
    public synchronized void send(DiscoveryRequest r, boolean withoutNode) {
        DiscoveryRequest.Builder b = r.toBuilder();
        if (first && !withoutNode) {
            b.setNode(node);
        }
        first = false;
        requests.onNext(b.build());
    }

    /** Whether the transport takes another request without buffering it (gRPC flow control). */
    private boolean ready() {
        return ((ClientCallStreamObserver<DiscoveryRequest>) requests).isReady();
    }

    /** Answer every response from now on: ACK ({@code nackMessage} null or empty) or NACK. */
    public void autoAnswer(String nackMessage) {
        autoAnswer = nackMessage == null ? "" : nackMessage;
    }

    public void subscribe(String type, List<String> names) {
        send(DiscoveryRequest.newBuilder().setTypeUrl(type).addAllResourceNames(names).build(), false);
    }

    public void ack(DiscoveryResponse r, List<String> names) {
        send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setVersionInfo(r.getVersionInfo())
                .setResponseNonce(r.getNonce()).addAllResourceNames(names).build(), false);
    }

    public void nack(DiscoveryResponse r, List<String> names, String message) {
        send(DiscoveryRequest.newBuilder().setTypeUrl(r.getTypeUrl()).setResponseNonce(r.getNonce())
                .addAllResourceNames(names).setErrorDetail(Status.newBuilder().setCode(3).setMessage(message)).build(), false);
    }

    /** The next response, or null after {@code timeout}. */
    public DiscoveryResponse next(Duration timeout) throws InterruptedException {
        return responses.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    public DiscoveryResponse await(String type, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            DiscoveryResponse r = responses.poll(100, TimeUnit.MILLISECONDS);
            if (r != null && r.getTypeUrl().equals(type)) {
                return r;
            }
            if (error != null) {
                throw new AssertionError("stream failed: " + error, error);
            }
        }
        throw new AssertionError("no " + type + " response within " + timeout);
    }

    public List<DiscoveryResponse> received() {
        return List.copyOf(all);
    }

    public Throwable error() {
        return error;
    }

    /** Waits for the stream to fail; returns the failure or null. */
    public Throwable awaitError(Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (error == null && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        return error;
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

    private static Value structValue(String json) {
        Struct.Builder b = Struct.newBuilder();
        try {
            JsonFormat.parser().merge(json, b);
        } catch (InvalidProtocolBufferException e) {
            throw new IllegalArgumentException("metadata value is not a JSON object: " + json, e);
        }
        return Value.newBuilder().setStructValue(b).build();
    }
}
