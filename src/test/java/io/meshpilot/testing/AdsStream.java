package io.meshpilot.testing;

import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Channel;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A state-of-the-world ADS stream held open by a test: what it receives, in order, as events. */
public final class AdsStream implements AutoCloseable {
    private final LinkedBlockingQueue<Object> events = new LinkedBlockingQueue<>();
    private final StreamObserver<DiscoveryRequest> requests;

    private AdsStream(Channel channel) {
        requests = AggregatedDiscoveryServiceGrpc.newStub(channel).streamAggregatedResources(new StreamObserver<>() {
            @Override
            public void onNext(DiscoveryResponse r) {
                events.add(r);
            }

            @Override
            public void onError(Throwable t) {
                events.add(t);
            }

            @Override
            public void onCompleted() {
                events.add("completed");
            }
        });
    }

    public static AdsStream open(Channel channel) {
        return new AdsStream(channel);
    }

    public void send(DiscoveryRequest request) {
        requests.onNext(request);
    }

    /** The next response, error or "completed"; null when nothing came within the wait. */
    public Object next(long seconds) throws InterruptedException {
        return events.poll(seconds, TimeUnit.SECONDS);
    }

    @Override
    public void close() {
        requests.onCompleted();
    }
}
