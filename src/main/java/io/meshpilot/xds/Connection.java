package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.StreamObserver;
import io.meshpilot.model.Proxy;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One ADS stream of one proxy: what it watches per type and where each type stands (sent,
 * ACKed, NACKed). Responses go out through the stream's {@link Outbox}, written by one thread
 * at a time: the gRPC stream is not thread-safe.
 */
public final class Connection {

    /** One type's subscription and sync state. */
    public static final class Watch {
        final String typeUrl;
        volatile SubscribedNames names = SubscribedNames.EMPTY;
        volatile boolean wildcard;
        volatile String nonceSent = "";
        volatile String versionSent = "";
        volatile String nonceAcked = "";
        volatile String versionAcked = "";
        volatile String nackError = "";
        volatile String nackVersion = "";
        volatile Instant lastSent;
        volatile int resourcesSent;
        /** Delta only: name -> version the proxy holds. */
        final java.util.Map<String, String> held = new java.util.concurrent.ConcurrentHashMap<>();

        Watch(String typeUrl) {
            this.typeUrl = typeUrl;
        }

        public String typeUrl() {
            return typeUrl;
        }

        public Set<String> names() {
            return names;
        }

        public boolean wildcard() {
            return wildcard;
        }

        public String nonceSent() {
            return nonceSent;
        }

        public String versionSent() {
            return versionSent;
        }

        public String nonceAcked() {
            return nonceAcked;
        }

        public String versionAcked() {
            return versionAcked;
        }

        public String nackError() {
            return nackError;
        }

        public String nackVersion() {
            return nackVersion;
        }

        public Instant lastSent() {
            return lastSent;
        }

        /** Synced: the last response sent was ACKed. */
        public boolean synced() {
            return !nonceSent.isEmpty() && nonceSent.equals(nonceAcked);
        }
    }

    private final String id;
    private final Proxy proxy;
    private final String peer;
    private final Instant connectedAt = Instant.now();
    private volatile java.util.List<String> identities = java.util.List.of();
    private final StreamObserver<DiscoveryResponse> out;
    private final StreamObserver<io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse> deltaOut;
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();
    private final Outbox outbox;

    Connection(String id, Proxy proxy, String peer, StreamObserver<DiscoveryResponse> out, Outbox outbox) {
        this.id = id;
        this.proxy = proxy;
        this.peer = peer;
        this.out = out;
        this.deltaOut = null;
        this.outbox = outbox;
    }

    /** A delta xDS stream. */
    Connection(String id, Proxy proxy, String peer,
               StreamObserver<io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse> deltaOut, Outbox outbox,
               boolean delta) {
        this.id = id;
        this.proxy = proxy;
        this.peer = peer;
        this.out = null;
        this.deltaOut = deltaOut;
        this.outbox = outbox;
    }

    public boolean delta() {
        return deltaOut != null;
    }

    public String id() {
        return id;
    }

    public Proxy proxy() {
        return proxy;
    }

    public String peer() {
        return peer;
    }

    /** The identities XDS_AUTH authenticated the stream with (empty on the plaintext port or without XDS_AUTH). */
    public java.util.List<String> identities() {
        return identities;
    }

    void authenticatedAs(java.util.List<String> ids) {
        identities = java.util.List.copyOf(ids);
    }

    public Instant connectedAt() {
        return connectedAt;
    }

    /** Whether the stream's transport ends it at the maximum connection age (Netty), or the xDS server must (Helidon). */
    boolean transportLimitsConnectionAge() {
        return outbox.transportLimitsConnectionAge();
    }

    public Map<String, Watch> watches() {
        return Map.copyOf(watches);
    }

    Watch watch(String typeUrl) {
        return watches.computeIfAbsent(typeUrl, Watch::new);
    }

    /**
     * Queues one response (replacing an unsent one of the same type, see {@link Outbox}); it is
     * recorded as sent when it is written.
     */
    void send(Watch w, DiscoveryResponse response) {
        outbox.offer(w, () -> write(w, response));
    }

    /** Queues one delta response; what the proxy holds is recorded when it is written. */
    void sendDelta(Watch w, io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse response) {
        outbox.offer(w, () -> writeDelta(w, response));
    }

    private synchronized void write(Watch w, DiscoveryResponse response) {
        // recorded before writing: the ACK may arrive (on another thread) before onNext returns
        w.nonceSent = response.getNonce();
        w.versionSent = response.getVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        out.onNext(response);
        String type = TypeUrls.metricType(w.typeUrl);
        AdsProtocol.XDS_PUSHES.increment(type);
        // the size gRPC just serialized (protobuf keeps it): no second encoding
        XdsMetrics.CONFIG_SIZE.recordValue(type, response.getSerializedSize());
    }

    private synchronized void writeDelta(Watch w,
                                         io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse response) {
        for (var r : response.getResourcesList()) {
            w.held.put(r.getName(), r.getVersion());
        }
        response.getRemovedResourcesList().forEach(w.held::remove);
        w.nonceSent = response.getNonce();
        w.versionSent = response.getSystemVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        deltaOut.onNext(response); // after recording: the ACK may race onNext
        String type = TypeUrls.metricType(w.typeUrl);
        AdsProtocol.XDS_PUSHES.increment(type);
        XdsMetrics.CONFIG_SIZE.recordValue(type, response.getSerializedSize());
    }

    void onSendFailure(java.util.function.Consumer<RuntimeException> handler) {
        outbox.onFailure(handler);
    }

    /** Responses waiting for a slow reader (at most one per type). */
    public int unsent() {
        return outbox.unsent();
    }

    /** Responses superseded by a newer one before a slow reader could take them. */
    public long replaced() {
        return outbox.replaced();
    }

    synchronized void close() {
        try {
            if (out != null) {
                out.onCompleted();
            } else {
                deltaOut.onCompleted();
            }
        } catch (RuntimeException e) {
            // the stream is already gone
        }
    }

    /** Ends the stream with {@code status}; the proxy reconnects (istiod's connection-age close). */
    synchronized void end(io.grpc.Status status) {
        try {
            if (out != null) {
                out.onError(status.asRuntimeException());
            } else {
                deltaOut.onError(status.asRuntimeException());
            }
        } catch (RuntimeException e) {
            // the stream is already gone
        }
    }
}
