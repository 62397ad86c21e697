package io.meshpilot.lifecycle;

import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Where one server is in its life: started (readiness may turn on), draining (shutting
 * down), when it became ready, and the port each listener really bound (":0" asks for an
 * ephemeral one). Written by the start-up wiring, read by probes and {@code /api/v1/server}.
 */
public final class ServerState {
    private volatile boolean started;
    private volatile boolean draining;
    private volatile Instant readyAt;
    private volatile Map<String, Integer> ports = Map.of();
    private volatile Map<String, String> addresses = Map.of();

    public boolean started() {
        return started;
    }

    public boolean draining() {
        return draining;
    }

    /** When start-up finished; null before. */
    public Instant readyAt() {
        return readyAt;
    }

    /** Bound port per listener: http, grpc, grpc-secure, monitoring, webhook. */
    public Map<String, Integer> ports() {
        return ports;
    }

    /** The address each listener was asked for, or where its content is served when its flag was empty. */
    public Map<String, String> addresses() {
        return addresses;
    }

    public void markStarted(Instant at) {
        readyAt = at;
        started = true;
    }

    public void markDraining() {
        draining = true;
    }

    /** Keeps the listeners in the order given (http, grpc, grpc-secure, monitoring, webhook): logs and tools read it so. */
    public void bound(Map<String, Integer> boundPorts, Map<String, String> askedAddresses) {
        ports = Collections.unmodifiableMap(new LinkedHashMap<>(boundPorts));
        addresses = Collections.unmodifiableMap(new LinkedHashMap<>(askedAddresses));
    }
}
