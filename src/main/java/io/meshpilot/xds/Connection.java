package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.stub.StreamObserver;
import io.meshpilot.model.Proxy;
import java.time.Instant;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One ADS stream of one proxy: what it watches per type and where each type stands (sent,
 * ACKed, NACKed). Sends are serialized per connection; the gRPC stream is not thread-safe.
 */
public final class Connection {

    /** One type's subscription and sync state. */
    public static final class Watch {
        final String typeUrl;
        volatile Set<String> names = Set.of();
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
    private final StreamObserver<DiscoveryResponse> out;
    private final StreamObserver<io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse> deltaOut;
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();

    Connection(String id, Proxy proxy, String peer, StreamObserver<DiscoveryResponse> out) {
        this.id = id;
        this.proxy = proxy;
        this.peer = peer;
        this.out = out;
        this.deltaOut = null;
    }

    /** A delta xDS stream. */
    Connection(String id, Proxy proxy, String peer,
               StreamObserver<io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse> deltaOut, boolean delta) {
        this.id = id;
        this.proxy = proxy;
        this.peer = peer;
        this.out = null;
        this.deltaOut = deltaOut;
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

    public Instant connectedAt() {
        return connectedAt;
    }

    public Map<String, Watch> watches() {
        return Map.copyOf(watches);
    }

    Watch watch(String typeUrl) {
        return watches.computeIfAbsent(typeUrl, Watch::new);
    }

    /** Sends one response and records it; serialized with every other send on this stream. */
    synchronized void send(Watch w, DiscoveryResponse response) {
        // recorded before sending: the ACK may arrive (on another thread) before onNext returns
        w.nonceSent = response.getNonce();
        w.versionSent = response.getVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        out.onNext(response);
    }

    /** Sends one delta response and records what the proxy now holds. */
    synchronized void sendDelta(Watch w, io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse response) {
        for (var r : response.getResourcesList()) {
            w.held.put(r.getName(), r.getVersion());
        }
        response.getRemovedResourcesList().forEach(w.held::remove);
        w.nonceSent = response.getNonce();
        w.versionSent = response.getSystemVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        deltaOut.onNext(response); // after recording: the ACK may race onNext
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

    static Set<String> copy(java.util.List<String> names) {
        return Set.copyOf(new HashSet<>(names));
    }
}
