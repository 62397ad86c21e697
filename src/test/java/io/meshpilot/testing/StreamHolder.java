package io.meshpilot.testing;

import io.envoyproxy.envoy.config.core.v3.Node;
import io.envoyproxy.envoy.service.discovery.v3.AggregatedDiscoveryServiceGrpc;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryRequest;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.stub.StreamObserver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A separate client process for tests that kill their peer: opens {@code streams} ADS
 * streams to 127.0.0.1:{@code port} over {@code channels} HTTP/2 connections, subscribes each
 * to all clusters, prints {@code holding <streams>} once every stream got its first answer,
 * and then holds them until it is killed. Usage: {@code StreamHolder port streams channels}.
 */
public final class StreamHolder {
    private StreamHolder() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int streams = Integer.parseInt(args[1]);
        int channels = Integer.parseInt(args[2]);
        ManagedChannel[] chans = new ManagedChannel[channels];
        for (int i = 0; i < channels; i++) {
            chans[i] = NettyChannelBuilder.forAddress("127.0.0.1", port).usePlaintext().build();
        }
        CountDownLatch answered = new CountDownLatch(streams);
        for (int i = 0; i < streams; i++) {
            var requests = AggregatedDiscoveryServiceGrpc.newStub(chans[i % channels])
                    .streamAggregatedResources(new StreamObserver<>() {
                        @Override
                        public void onNext(DiscoveryResponse r) {
                            answered.countDown();
                        }

                        @Override
                        public void onError(Throwable t) {
                            System.out.println("stream failed: " + t);
                        }

                        @Override
                        public void onCompleted() {
                        }
                    });
            requests.onNext(DiscoveryRequest.newBuilder()
                    .setNode(Node.newBuilder().setId("sidecar~10.9.0." + i + "~holder-" + i + ".test~test.svc.cluster.local"))
                    .setTypeUrl("type.googleapis.com/envoy.config.cluster.v3.Cluster").build());
        }
        if (!answered.await(60, TimeUnit.SECONDS)) {
            System.out.println("not answered: " + answered.getCount());
            System.exit(1);
        }
        System.out.println("holding " + streams);
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
