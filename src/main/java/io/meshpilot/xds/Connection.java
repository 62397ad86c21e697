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
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();

    Connection(String id, Proxy proxy, String peer, StreamObserver<DiscoveryResponse> out) {
        this.id = id;
        this.proxy = proxy;
        this.peer = peer;
        this.out = out;
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
        out.onNext(response);
        w.nonceSent = response.getNonce();
        w.versionSent = response.getVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
    }

    synchronized void close() {
        try {
            out.onCompleted();
        } catch (RuntimeException e) {
            // the stream is already gone
        }
    }

    static Set<String> copy(java.util.List<String> names) {
        return Set.copyOf(new HashSet<>(names));
    }
}
