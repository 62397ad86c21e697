package io.meshpilot.admin;

import io.meshpilot.lifecycle.BuildInfo;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.lifecycle.ServerState;
import io.meshpilot.lifecycle.StartupRecorder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code GET /api/v1/server}: what this instance is and how it started: mode, the port each
 * listener really bound, component start timings, readiness.
 */
@ApplicationScoped
@Path("/api/v1/server")
public class ServerResource {

    /** One listener: the address asked for and the port bound. */
    public record Listener(String address, int port) {
    }

    /** One component's start. */
    public record ComponentTiming(String name, String startedAt, double millis, String detail) {
    }

    /** The response body. */
    public record ServerInfo(String mode, String modeReason, String version, String revision, String namespace,
                             String clusterId, String domainSuffix, String grpcTransport, String startTime,
                             String readyAt, boolean ready, List<String> failingProbes,
                             Map<String, Listener> listeners, List<ComponentTiming> components) {
    }

    @Inject
    ServerIdentity identity;

    @Inject
    ServerState state;

    @Inject
    StartupRecorder recorder;

    @Inject
    Readiness readiness;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public ServerInfo server() {
        Map<String, Listener> listeners = new LinkedHashMap<>();
        Map<String, String> addresses = state.addresses();
        state.ports().forEach((name, port) -> listeners.put(name, new Listener(addresses.getOrDefault(name, ""), port)));
        List<ComponentTiming> components = recorder.starts().stream()
                .map(s -> new ComponentTiming(s.name(), s.startedAt().toString(),
                        Math.round(s.millis() * 10) / 10.0, s.detail() == null ? "" : s.detail()))
                .toList();
        BuildInfo build = BuildInfo.current();
        List<String> failing = readiness.failing();
        return new ServerInfo(identity.mode(), identity.modeReason(), build.version(), build.revision(),
                identity.namespace(), identity.clusterId(), identity.domainSuffix(), identity.grpcTransport(),
                recorder.createdAt().toString(), state.readyAt() == null ? null : state.readyAt().toString(),
                failing.isEmpty(), failing, listeners, components);
    }
}
