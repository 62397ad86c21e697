package io.meshpilot.xds;

import io.envoyproxy.envoy.service.discovery.v3.DeltaDiscoveryResponse;
import io.envoyproxy.envoy.service.discovery.v3.DiscoveryResponse;
import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.meshpilot.model.Proxy;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * One ADS stream of one proxy: what it watches per type and where each type stands (sent,
 * ACKed, NACKed). Responses go out through the stream's {@link Outbox}, written by one thread
 * at a time: the gRPC stream is not thread-safe.
 */
public final class Connection {

    /** A held resource's version after a NACK: equal to no version a generator gives. */
    private static final String NOT_HELD = "";

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
        /**
         * istiod's AlwaysRespond: the next ACK is answered even if it changes nothing. Set on
         * EDS when CDS starts again, so that Envoy gets the endpoints of the clusters it warms.
         */
        volatile boolean alwaysRespond;
        /** Delta only: name -> version the proxy holds. */
        final Map<String, String> held = new ConcurrentHashMap<>();
        /**
         * EDS on a state-of-the-world stream: cluster -> number of the endpoint change whose
         * assignment has not been written to the proxy yet. A partial response (only changed
         * clusters) may replace an unsent one, so it carries every cluster still owed.
         */
        final Map<String, Long> owedEndpoints = new ConcurrentHashMap<>();
        final AtomicLong endpointChanges = new AtomicLong();
        /** The number of the full EDS response queued and not written yet (0: none): a partial one must not replace it. */
        final AtomicLong unsentFull = new AtomicLong();
        private final AtomicLong fullResponses = new AtomicLong();
        /**
         * Whether what is sent is recorded in {@link #held}: not for ztunnel's Address type, whose
         * generator tracks what the client holds itself (a name per workload per ztunnel is too much).
         */
        volatile boolean keepsHeld = true;
        /** Delta, with {@link #keepsHeld}: the names the last response carried, what a NACK of it rejected. */
        volatile List<String> namesSent = List.of();

        Watch(String typeUrl) {
            this.typeUrl = typeUrl;
        }

        /**
         * The subscription starts (again), as istiod's NewWatchedResource: {@code names}, and
         * nothing sent, ACKed or NACKed yet. The same instance stays the type's watch, so that a
         * push already under way records what it sends where the next ACK is looked for.
         */
        void restart(SubscribedNames names, boolean wildcard) {
            this.names = names;
            this.wildcard = wildcard;
            nonceSent = "";
            versionSent = "";
            nonceAcked = "";
            versionAcked = "";
            nackError = "";
            nackVersion = "";
            alwaysRespond = false;
            owedEndpoints.clear();
        }

        /** The proxy ACKed {@code nonce} (the last response sent), holding {@code version}. */
        void acked(String nonce, String version) {
            nonceAcked = nonce;
            versionAcked = version;
            nackError = "";
        }

        /**
         * A delta NACK of the response {@code nonce}: the client did not take (all of) it, and
         * ztunnel records none of the resources it rejects (client.rs HandlerWrapper::handle), so
         * what that response carried is held at no version and the next push sends it again, as
         * istiod's forced pushes re-send every policy. The names stay held, so that a removal is
         * still reported. A NACK of an older response than the last, whose names are gone, does
         * this for everything held.
         */
        void forgetRejected(String nonce) {
            if (nonce.equals(nonceSent)) {
                namesSent.forEach(n -> held.replace(n, NOT_HELD));
            } else {
                held.replaceAll((n, v) -> NOT_HELD);
            }
        }

        /** Whether this request must be answered whatever it asks (see {@link #alwaysRespond}); cleared. */
        boolean takeAlwaysRespond() {
            boolean respond = alwaysRespond;
            alwaysRespond = false;
            return respond;
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
    private volatile List<String> identities = List.of();
    private final StreamObserver<DiscoveryResponse> out;
    private final StreamObserver<DeltaDiscoveryResponse> deltaOut;
    private final Map<String, Watch> watches = new ConcurrentHashMap<>();
    /**
     * Held while a type's watch is replaced and while a response is queued for a watch, so that
     * a push for a watch that is no longer the type's cannot replace the new watch's answer.
     * Not the connection's own lock: that one is held while a slow reader's write blocks.
     */
    private final Object subscriptionLock = new Object();
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
               StreamObserver<DeltaDiscoveryResponse> deltaOut, Outbox outbox,
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
    public List<String> identities() {
        return identities;
    }

    void authenticatedAs(List<String> ids) {
        identities = List.copyOf(ids);
    }

    public Instant connectedAt() {
        return connectedAt;
    }

    /** Whether the stream's transport ends it at the maximum connection age (Netty), or the xDS server must (Helidon). */
    boolean transportLimitsConnectionAge() {
        return outbox.transportLimitsConnectionAge();
    }

    /** The stream's watches by type URL: a read-only live view (each push reads it for every connection, so no copy). */
    public Map<String, Watch> watches() {
        return Collections.unmodifiableMap(watches);
    }

    /** The watch of {@code typeUrl}, or null when the stream has no state for that type. */
    Watch existingWatch(String typeUrl) {
        return watches.get(typeUrl);
    }

    /** The watch of {@code typeUrl}, made when the stream has none. */
    Watch watch(String typeUrl) {
        synchronized (subscriptionLock) {
            return watches.computeIfAbsent(typeUrl, Watch::new);
        }
    }

    /** How many types the stream watches. */
    int watchCount() {
        return watches.size();
    }

    /** The proxy no longer watches {@code typeUrl} (istiod's DeleteWatchedResource). */
    void unwatch(String typeUrl) {
        synchronized (subscriptionLock) {
            watches.remove(typeUrl);
        }
    }

    /** Whether {@code w} is still its type's watch: a push for an unsubscribed one is dropped. */
    private boolean current(Watch w) {
        return watches.get(w.typeUrl) == w;
    }

    /**
     * The send-queue slot of the debug types' answers: they have no watch, and one slot for all
     * of them keeps what a client that asks without reading can make us queue to one answer.
     */
    static final String DEBUG_SLOT = TypeUrls.DEBUG_PREFIX;

    /**
     * Queues one response (replacing an unsent one of the same type, see {@link Outbox}); it is
     * recorded as sent when it is written.
     */
    void send(Watch w, DiscoveryResponse response) {
        offer(w, response.getSerializedSize(), () -> write(w, response));
    }

    /**
     * Queues a full EDS response, built while no partial one can be queued (so none can replace
     * it with older contents): when it is written, every endpoint change before it was built is
     * delivered.
     */
    void sendEndpoints(Watch w, Supplier<DiscoveryResponse> build) {
        synchronized (subscriptionLock) {
            if (current(w)) {
                offerFullEndpoints(w, build);
            }
        }
    }

    /**
     * istiod's partial EDS push (eds.go buildEndpoints with partialPush): after an endpoint
     * change, only the assignments of {@code changed} clusters, plus those of earlier changes not
     * yet written (a response queued for a slow reader is replaced by this one, so it must carry
     * them too). While a full response is unsent, a full one is built instead. Envoy, grpc-java,
     * grpc-js and C-core keep the EDS resources a state-of-the-world response leaves out.
     *
     * @param partial builds the response for the clusters it is given
     * @param full    builds the response for every subscribed cluster
     */
    void sendChangedEndpoints(Watch w, Set<String> changed, Function<Set<String>, DiscoveryResponse> partial,
                              Supplier<DiscoveryResponse> full) {
        synchronized (subscriptionLock) {
            if (!current(w)) {
                return;
            }
            if (changed.size() >= w.names.size()) {
                // every subscribed cluster changed (names are a subset): the full response is the same
                // and shared by identity with every proxy of the subscription
                offerFullEndpoints(w, full);
                return;
            }
            long change = w.endpointChanges.incrementAndGet();
            for (String cluster : changed) {
                w.owedEndpoints.put(cluster, change);
            }
            if (w.unsentFull.get() != 0) {
                offerFullEndpoints(w, full);
                return;
            }
            Map<String, Long> covered = new HashMap<>();
            Set<String> subscribed = w.names;
            w.owedEndpoints.forEach((cluster, n) -> {
                if (subscribed.contains(cluster)) {
                    covered.put(cluster, n);
                }
            });
            DiscoveryResponse response = partial.apply(Set.copyOf(covered.keySet()));
            outbox.offer(w.typeUrl, response.getSerializedSize(), () -> {
                synchronized (this) {
                    write(w, response);
                    covered.forEach(w.owedEndpoints::remove); // unless changed again since
                }
            });
        }
    }

    private void offerFullEndpoints(Watch w, Supplier<DiscoveryResponse> build) {
        long upTo = w.endpointChanges.get();
        DiscoveryResponse response = build.get();
        long id = w.fullResponses.incrementAndGet();
        w.unsentFull.set(id);
        outbox.offer(w.typeUrl, response.getSerializedSize(), () -> {
            synchronized (this) {
                write(w, response);
                w.unsentFull.compareAndSet(id, 0);
                w.owedEndpoints.values().removeIf(n -> n <= upTo);
            }
        });
    }

    /** Queues one delta response; what the proxy holds is recorded when it is written. */
    void sendDelta(Watch w, DeltaDiscoveryResponse response) {
        offer(w, response.getSerializedSize(), () -> writeDelta(w, response));
    }

    /** Queues {@code write} in the type's slot unless the proxy unsubscribed {@code w} meanwhile. */
    private void offer(Watch w, int bytes, Runnable write) {
        synchronized (subscriptionLock) {
            if (current(w)) {
                outbox.offer(w.typeUrl, bytes, write);
            }
        }
    }

    /** Queues the answer to a debug request: nothing is recorded of it (istiod keeps no state for debug types). */
    void sendDebug(DiscoveryResponse response) {
        offerDebug(() -> out.onNext(response), response.getTypeUrl(), response.getSerializedSize());
    }

    /** Queues the answer to a debug request on a delta stream; nothing is recorded of it. */
    void sendDeltaDebug(DeltaDiscoveryResponse response) {
        offerDebug(() -> deltaOut.onNext(response), response.getTypeUrl(), response.getSerializedSize());
    }

    private void offerDebug(Runnable write, String typeUrl, int bytes) {
        outbox.offer(DEBUG_SLOT, bytes, () -> {
            synchronized (this) {
                write.run();
                sent(typeUrl, bytes);
            }
        });
    }

    private synchronized void write(Watch w, DiscoveryResponse response) {
        if (!current(w)) {
            return; // unsubscribed after it was queued: the proxy no longer wants it
        }
        // recorded before writing: the ACK may arrive (on another thread) before onNext returns
        w.nonceSent = response.getNonce();
        w.versionSent = response.getVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        out.onNext(response);
        // the size gRPC just serialized (protobuf keeps it): no second encoding
        sent(w.typeUrl, response.getSerializedSize());
    }

    private static void sent(String typeUrl, int bytes) {
        AdsProtocol.XDS_PUSHES.increment(TypeUrls.metricType(typeUrl));
        XdsMetrics.CONFIG_SIZE.recordValue(TypeUrls.configSizeType(typeUrl), bytes);
    }

    private synchronized void writeDelta(Watch w,
                                         DeltaDiscoveryResponse response) {
        if (!current(w)) {
            return;
        }
        if (w.keepsHeld) {
            List<String> names = new ArrayList<>(response.getResourcesCount());
            for (var r : response.getResourcesList()) {
                w.held.put(r.getName(), r.getVersion());
                names.add(r.getName());
            }
            response.getRemovedResourcesList().forEach(w.held::remove);
            w.namesSent = names;
        }
        w.nonceSent = response.getNonce();
        w.versionSent = response.getSystemVersionInfo();
        w.lastSent = Instant.now();
        w.resourcesSent = response.getResourcesCount();
        deltaOut.onNext(response); // after recording: the ACK may race onNext
        sent(w.typeUrl, response.getSerializedSize());
    }

    void onSendFailure(Consumer<RuntimeException> handler) {
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

    /** The client ended the stream: nothing queued is written. */
    void abandon() {
        outbox.stop();
    }

    /** Completes the stream after the write under way, if any; nothing queued is written. */
    void close() {
        outbox.stop();
        synchronized (this) {
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
    }

    /**
     * Ends the stream with {@code status} after the write under way, if any (the stream is not
     * thread-safe); nothing queued is written. The proxy reconnects (istiod's connection-age close).
     */
    void end(Status status) {
        outbox.stop();
        synchronized (this) {
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
}
