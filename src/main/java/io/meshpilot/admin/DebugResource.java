package io.meshpilot.admin;

import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.model.Environment;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import java.lang.reflect.Method;
import java.util.List;
import java.util.TreeSet;

/**
 * istiod's debug endpoints under {@code /debug}, on the http and monitoring listeners;
 * {@code /debug/list} names whatever this class serves, so it cannot drift.
 */
@ApplicationScoped
@Path("/debug")
public class DebugResource {
    @Inject
    Environment environment;

    @Inject
    io.meshpilot.config.ConfigController configs;

    @Inject
    io.meshpilot.registry.ServiceRegistries registries;

    @Inject
    io.meshpilot.xds.DiscoveryServer xds;

    /** {@code /debug/list}: the debug endpoint names, sorted, without "list" itself (as istiod). */
    @GET
    @Path("list")
    @Produces(MediaType.APPLICATION_JSON)
    public List<String> list() {
        return endpointNames();
    }

    /** {@code /debug/mesh}: the mesh config in force, as protobuf JSON; {@code ?pretty} indents. */
    @GET
    @Path("mesh")
    @Produces(MediaType.APPLICATION_JSON)
    public String mesh(@QueryParam("pretty") String pretty) throws InvalidProtocolBufferException {
        JsonFormat.Printer printer = JsonFormat.printer();
        String json = printer.print(environment.mesh());
        return pretty == null ? compact(json) : json;
    }

    /** {@code /debug/configz}: every config object, as Kubernetes objects (istiod's shape). */
    @GET
    @Path("configz")
    @Produces(MediaType.APPLICATION_JSON)
    public String configz() {
        java.util.List<io.meshpilot.config.Config> all = new java.util.ArrayList<>();
        for (io.meshpilot.config.Schema s : configs.schemas().all()) {
            all.addAll(configs.store().list(s.kind(), null));
        }
        return io.meshpilot.config.ConfigJson.toJson(all).toString();
    }

    /** {@code /debug/registryz}: every service of every registry (istiod's shape: a list). */
    @GET
    @Path("registryz")
    @Produces(MediaType.APPLICATION_JSON)
    public String registryz() {
        com.google.gson.JsonArray out = new com.google.gson.JsonArray();
        environment.serviceDiscovery().services().forEach(s -> out.add(RegistryJson.service(s, null)));
        return out.toString();
    }

    /** {@code /debug/endpointShardz}: hostname -> namespace -> {Shards: {provider/cluster: [...]}, ServiceAccounts}. */
    @GET
    @Path("endpointShardz")
    @Produces(MediaType.APPLICATION_JSON)
    public String endpointShardz() {
        com.google.gson.JsonObject out = new com.google.gson.JsonObject();
        environment.endpointIndex().snapshot().forEach((host, byNs) -> {
            com.google.gson.JsonObject h = new com.google.gson.JsonObject();
            byNs.forEach((ns, shards) -> {
                com.google.gson.JsonObject o = new com.google.gson.JsonObject();
                com.google.gson.JsonObject byShard = new com.google.gson.JsonObject();
                shards.byShard().entrySet().stream().sorted(
                        java.util.Map.Entry.comparingByKey(java.util.Comparator.comparing(Object::toString)))
                        .forEach(e -> {
                            com.google.gson.JsonArray eps = new com.google.gson.JsonArray();
                            e.getValue().forEach(ep -> eps.add(RegistryJson.endpoint(ep)));
                            byShard.add(e.getKey().toString(), eps);
                        });
                o.add("Shards", byShard);
                o.add("ServiceAccounts", RegistryJson.strings(shards.serviceAccounts().stream().sorted().toList()));
                h.add(ns, o);
            });
            out.add(host, h);
        });
        return out.toString();
    }

    /**
     * {@code /debug/instancesz}: istiod keys it by connected proxy (the service instances a
     * proxy implements). Here it lists the registries' workload instances by
     * namespace/name, which is what a proxy's instances are built from: WorkloadEntries and,
     * with the Kubernetes registry, ready pods (kind Pod).
     */
    @GET
    @Path("instancesz")
    @Produces(MediaType.APPLICATION_JSON)
    public String instancesz() {
        com.google.gson.JsonObject out = new com.google.gson.JsonObject();
        java.util.List<io.meshpilot.model.WorkloadInstance> all = new java.util.ArrayList<>(
                registries.serviceEntries().workloads());
        if (registries.kubernetes() != null) {
            all.addAll(registries.kubernetes().podWorkloads());
        }
        for (io.meshpilot.model.WorkloadInstance w : all) {
            com.google.gson.JsonObject o = RegistryJson.endpoint(w.endpoint());
            o.addProperty("kind", w.kind());
            o.add("ports", new com.google.gson.Gson().toJsonTree(new java.util.TreeMap<>(w.portMap())));
            out.add(w.namespace() + "/" + w.name(), o);
        }
        return out.toString();
    }

    /**
     * {@code /debug/syncz}: per connected proxy, what was sent and ACKed per type (istiod's
     * keys: cluster_sent, cluster_acked, listener_*, route_*, endpoint_*), plus
     * {@code <type>_nack} with the proxy's error when its last answer was a NACK.
     */
    @GET
    @Path("syncz")
    @Produces(MediaType.APPLICATION_JSON)
    public String syncz() {
        com.google.gson.JsonArray out = new com.google.gson.JsonArray();
        for (io.meshpilot.xds.Connection c : xds.connections()) {
            com.google.gson.JsonObject o = new com.google.gson.JsonObject();
            o.addProperty("cluster_id", c.proxy().clusterId());
            o.addProperty("proxy", c.id());
            o.addProperty("proxy_type", c.proxy().type().name().toLowerCase(java.util.Locale.ROOT));
            o.addProperty("istio_version", c.proxy().istioVersion());
            c.watches().forEach((type, w) -> {
                String k = switch (io.meshpilot.xds.TypeUrls.shortName(type)) {
                    case "cds" -> "cluster";
                    case "lds" -> "listener";
                    case "rds" -> "route";
                    case "eds" -> "endpoint";
                    default -> null;
                };
                if (k != null) {
                    o.addProperty(k + "_sent", w.nonceSent());
                    o.addProperty(k + "_acked", w.nonceAcked());
                    if (!w.nackError().isEmpty()) {
                        o.addProperty(k + "_nack", w.nackError());
                    }
                }
            });
            out.add(o);
        }
        return out.toString();
    }

    /** {@code /debug/adsz}: connected ADS clients with what they watch (istiod's adsz). */
    @GET
    @Path("adsz")
    @Produces(MediaType.APPLICATION_JSON)
    public String adsz() {
        com.google.gson.JsonArray out = new com.google.gson.JsonArray();
        for (io.meshpilot.xds.Connection c : xds.connections()) {
            com.google.gson.JsonObject o = ProxyResource.proxy(c);
            com.google.gson.JsonObject watched = new com.google.gson.JsonObject();
            c.watches().forEach((type, w) -> watched.add(io.meshpilot.xds.TypeUrls.shortName(type),
                    RegistryJson.strings(w.wildcard() ? java.util.List.of("*") : w.names().stream().sorted().toList())));
            o.add("watches", watched);
            out.add(o);
        }
        return out.toString();
    }

    /**
     * {@code /debug/push_status}: the PushContext in force (version, when and how fast it was
     * built, sizes) and istiod's {@code ProxyStatus}: the conflicting or unsupported config the
     * push went on without.
     */
    @GET
    @Path("push_status")
    @Produces(MediaType.APPLICATION_JSON)
    public String pushStatus() {
        io.meshpilot.model.PushContext p = xds.currentPushContext();
        com.google.gson.JsonObject o = new com.google.gson.JsonObject();
        if (p != null) {
            o.addProperty("version", p.version());
            o.addProperty("builtAt", p.builtAt().toString());
            o.addProperty("buildMillis", p.buildTime().toNanos() / 1e6);
            o.addProperty("services", p.services().size());
            o.addProperty("virtualServices", p.virtualServiceCount());
            o.addProperty("connections", xds.connections().size());
        }
        o.add("ProxyStatus", proxyStatus(p == null ? null : xds.diagnostics(p)));
        return o.toString();
    }

    /**
     * istiod's ProxyStatus: metric name, then key, then {@code {proxy, message}} (proxy left
     * out when empty, as istiod's omitempty); {@code {}} when the push has no problems.
     */
    static com.google.gson.JsonObject proxyStatus(io.meshpilot.model.PushDiagnostics d) {
        com.google.gson.JsonObject status = new com.google.gson.JsonObject();
        if (d == null) {
            return status;
        }
        d.all().forEach((metric, entries) -> {
            com.google.gson.JsonObject byKey = new com.google.gson.JsonObject();
            entries.forEach((key, e) -> {
                com.google.gson.JsonObject entry = new com.google.gson.JsonObject();
                if (!e.proxy().isEmpty()) {
                    entry.addProperty("proxy", e.proxy());
                }
                entry.addProperty("message", e.message());
                byKey.add(key, entry);
            });
            status.add(metric, byKey);
        });
        return status;
    }

    /** {@code /debug/config_dump?proxyID=}: what that proxy gets now, per type (400 without proxyID, 404 when not connected). */
    @GET
    @Path("config_dump")
    @Produces(MediaType.APPLICATION_JSON)
    public jakarta.ws.rs.core.Response configDump(@QueryParam("proxyID") String proxyId) {
        if (proxyId == null || proxyId.isEmpty()) {
            return jakarta.ws.rs.core.Response.status(400).type(MediaType.APPLICATION_JSON)
                    .entity("{\"error\":\"You must provide a proxyID in the query string\"}").build();
        }
        return xds.configDump(proxyId)
                .map(j -> jakarta.ws.rs.core.Response.ok(j, MediaType.APPLICATION_JSON).build())
                .orElseGet(() -> jakarta.ws.rs.core.Response.status(404).type(MediaType.APPLICATION_JSON)
                        .entity("{\"error\":\"Proxy not connected to this Pilot instance. It may be connected to "
                                + "another instance.\"}").build());
    }

    /** {@code /debug/connections}: connected xDS clients (istiod's shape: id, peer, connectedAt). */
    @GET
    @Path("connections")
    @Produces(MediaType.APPLICATION_JSON)
    public String connections() {
        com.google.gson.JsonArray out = new com.google.gson.JsonArray();
        for (io.meshpilot.xds.Connection c : xds.connections()) {
            com.google.gson.JsonObject o = new com.google.gson.JsonObject();
            o.addProperty("connectionId", c.id());
            o.addProperty("proxy", c.proxy().id());
            o.addProperty("address", c.peer());
            o.addProperty("connectedAt", c.connectedAt().toString());
            o.addProperty("unsent", c.unsent());
            o.addProperty("replaced", c.replaced());
            com.google.gson.JsonArray ids = new com.google.gson.JsonArray();
            c.identities().forEach(ids::add);
            o.add("identities", ids);
            out.add(o);
        }
        return out.toString();
    }

    static List<String> endpointNames() {
        TreeSet<String> names = new TreeSet<>();
        for (Class<?> resource : List.of(DebugResource.class, DebugModelResource.class)) {
            for (Method m : resource.getDeclaredMethods()) {
                Path p = m.getAnnotation(Path.class);
                if (p != null && m.isAnnotationPresent(GET.class) && !p.value().equals("list")) {
                    names.add(p.value());
                }
            }
        }
        return List.copyOf(names);
    }

    /** JsonFormat only pretty-prints; istiod answers compact JSON unless ?pretty. */
    private static String compact(String json) {
        return com.google.gson.JsonParser.parseString(json).toString();
    }
}
