package io.meshpilot.admin;

import com.google.gson.Gson;
import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigJson;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.features.ServerMode;
import io.meshpilot.lifecycle.Readiness;
import io.meshpilot.lifecycle.ServerIdentity;
import io.meshpilot.model.Environment;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.PushDiagnostics;
import io.meshpilot.model.PushRequest;
import io.meshpilot.model.TriggerReason;
import io.meshpilot.model.WorkloadInstance;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.registry.controller.ServiceRegistries;
import io.meshpilot.xds.Connection;
import io.meshpilot.xds.DiscoveryServer;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * istiod's debug endpoints under {@code /debug}, on the http and monitoring listeners;
 * {@code /debug/list} names whatever this class serves, so it cannot drift.
 */
@ApplicationScoped
@Path("/debug")
public class DebugResource {
    /** istiod's answers when a debug request names no proxy, or one not connected here. */
    static final String NO_PROXY_ID = "You must provide a proxyID in the query string\n";
    public static final String NOT_CONNECTED =
            "Proxy not connected to this Pilot instance. It may be connected to another instance.\n";

    /** Envoy's JSON names, every resource and typed config known (as Envoy's own admin prints). */
    private static final JsonFormat.Printer DUMP_PRINTER = JsonFormat.printer()
            .usingTypeRegistry(EnvoyTypes.REGISTRY).omittingInsignificantWhitespace();

    @Inject
    Environment environment;

    @Inject
    ConfigController configs;

    @Inject
    ServiceRegistries registries;

    @Inject
    DiscoveryServer xds;

    @Inject
    ServerIdentity identity;

    @Inject
    Readiness readiness;

    /**
     * Queries istiod registers as debug handlers of their own, so that {@code /debug/list} (and
     * {@code istioctl x internal-debug --list}) names them.
     */
    private static final List<String> QUERY_VARIANTS = List.of("adsz?push=true", "cachez?clear=true",
            "cachez?sizes=true");

    /** {@code /debug}: istiod's HTML index of the debug endpoints (open to every caller, as istiod's). */
    @GET
    @Produces(MediaType.TEXT_HTML)
    public String index() {
        return DebugIndex.html(list());
    }

    /** {@code /debug/list}: the debug endpoint names and istiod's query variants, sorted, without "list" (as istiod). */
    @GET
    @Path("list")
    @Produces(MediaType.APPLICATION_JSON)
    public List<String> list() {
        TreeSet<String> names = new TreeSet<>(endpointNames());
        names.addAll(QUERY_VARIANTS);
        return List.copyOf(names);
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
        List<Config> all = new ArrayList<>();
        for (Schema s : configs.schemas().all()) {
            all.addAll(configs.store().list(s.kind(), null));
        }
        return ConfigJson.toJson(all).toString();
    }

    /** {@code /debug/registryz}: every service of every registry, as istiod's model.Service JSON list. */
    @GET
    @Path("registryz")
    @Produces(MediaType.APPLICATION_JSON)
    public String registryz() {
        JsonArray out = new JsonArray();
        environment.serviceDiscovery().services().forEach(s -> out.add(RegistryzJson.service(s)));
        return out.toString();
    }

    /**
     * {@code /debug/clusterz}: the clusters istiod reads (istiod's ListRemoteClusters): in
     * Kubernetes mode the config cluster first ({@code --clusterID}, synced once this server is
     * ready), then the remote clusters read through remote Secrets, each with its id, the
     * Secret it came from and whether it has synced. Without Kubernetes istiod has no cluster
     * list: 400 with an empty body.
     */
    @GET
    @Path("clusterz")
    @Produces(MediaType.APPLICATION_JSON)
    public Response clusterz() {
        if (!ServerMode.KUBERNETES.label().equals(identity.mode())) {
            return Response.status(400).build();
        }
        JsonArray out = new JsonArray();
        out.add(cluster(identity.clusterId(), "", readiness.ready() ? "synced" : "syncing"));
        if (registries.remoteClusters() != null) {
            registries.remoteClusters().status().forEach(c -> out.add(cluster(c.id(), c.secretName(), c.syncStatus())));
        }
        return json(out.toString());
    }

    private static JsonObject cluster(String id, String secretName, String syncStatus) {
        JsonObject o = new JsonObject();
        o.addProperty("id", id);
        o.addProperty("secretName", secretName);
        o.addProperty("syncStatus", syncStatus);
        return o;
    }

    /** {@code /debug/endpointShardz}: hostname -> namespace -> {Shards: {provider/cluster: [...]}, ServiceAccounts}. */
    @GET
    @Path("endpointShardz")
    @Produces(MediaType.APPLICATION_JSON)
    public String endpointShardz() {
        JsonObject out = new JsonObject();
        environment.endpointIndex().snapshot().forEach((host, byNs) -> {
            JsonObject h = new JsonObject();
            byNs.forEach((ns, shards) -> {
                JsonObject o = new JsonObject();
                JsonObject byShard = new JsonObject();
                shards.byShard().entrySet().stream().sorted(
                        Map.Entry.comparingByKey(Comparator.comparing(Object::toString)))
                        .forEach(e -> {
                            JsonArray eps = new JsonArray();
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
        JsonObject out = new JsonObject();
        List<WorkloadInstance> all = new ArrayList<>(
                registries.serviceEntries().workloads());
        if (registries.kubernetes() != null) {
            all.addAll(registries.kubernetes().podWorkloads());
        }
        for (WorkloadInstance w : all) {
            JsonObject o = RegistryJson.endpoint(w.endpoint());
            o.addProperty("kind", w.kind());
            o.add("ports", new Gson().toJsonTree(new TreeMap<>(w.portMap())));
            out.add(w.namespace() + "/" + w.name(), o);
        }
        return out.toString();
    }

    /**
     * {@code /debug/syncz[?namespace=]}: istiod's SyncStatus list, one per connection (sorted
     * by connection id), nonces sent and ACKed per type and per type URL with the last NACK.
     */
    @GET
    @Path("syncz")
    @Produces(MediaType.APPLICATION_JSON)
    public String syncz(@QueryParam("namespace") String namespace) {
        JsonArray out = new JsonArray();
        for (Connection c : sortedConnections()) {
            if (namespace == null || namespace.isEmpty() || namespace.equals(c.proxy().namespace())) {
                out.add(XdsDebugJson.syncStatus(c));
            }
        }
        return out.toString();
    }

    /**
     * {@code /debug/adsz}: istiod's AdsClients with what each client watches; {@code ?proxyID=}
     * narrows it to that proxy's connection (404 when not connected here); {@code ?push=true}
     * starts a full push to every connection instead and says to how many.
     */
    @GET
    @Path("adsz")
    public Response adsz(@QueryParam("push") String push, @QueryParam("proxyID") String proxyId) {
        if (push != null && !push.isEmpty()) {
            xds.updates().configUpdate(PushRequest.full(TriggerReason.DEBUG));
            return text(200, "Pushed to " + xds.connections().size() + " servers\n");
        }
        List<Connection> connections = sortedConnections();
        if (proxyId != null && !proxyId.isEmpty()) {
            var con = xds.debugConnection(proxyId);
            if (con.isEmpty()) {
                return text(404, NOT_CONNECTED);
            }
            connections = List.of(con.get());
        }
        return json(XdsDebugJson.adsClients(connections, true).toString());
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
        PushContext p = xds.currentPushContext();
        JsonObject o = new JsonObject();
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
    static JsonObject proxyStatus(PushDiagnostics d) {
        JsonObject status = new JsonObject();
        if (d == null) {
            return status;
        }
        d.all().forEach((metric, entries) -> {
            JsonObject byKey = new JsonObject();
            entries.forEach((key, e) -> {
                JsonObject entry = new JsonObject();
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

    /**
     * {@code /debug/config_dump?proxyID=[&include_eds]}: what that proxy gets now, as Envoy's
     * admin ConfigDump JSON ({@code istioctl proxy-config --file} and config comparisons read it);
     * istiod's plain-text 400 without proxyID and 404 when it is not connected here.
     */
    @GET
    @Path("config_dump")
    public Response configDump(@QueryParam("proxyID") String proxyId,
                                                  @QueryParam("include_eds") String includeEds) {
        if (proxyId == null || proxyId.isEmpty()) {
            return text(400, NO_PROXY_ID);
        }
        var con = xds.debugConnection(proxyId);
        if (con.isEmpty()) {
            return text(404, NOT_CONNECTED);
        }
        try {
            return json(DUMP_PRINTER.print(xds.configDump(con.get(), includeEds != null)));
        } catch (InvalidProtocolBufferException e) {
            return text(500, e.getMessage());
        }
    }

    /** {@code /debug/force_disconnect?proxyID=}: ends that proxy's xDS stream (it reconnects); istiod answers "OK". */
    @GET
    @Path("force_disconnect")
    public Response forceDisconnect(@QueryParam("proxyID") String proxyId) {
        if (proxyId == null || proxyId.isEmpty()) {
            return text(400, NO_PROXY_ID);
        }
        var con = xds.debugConnection(proxyId);
        if (con.isEmpty()) {
            return text(404, NOT_CONNECTED);
        }
        xds.forceDisconnect(con.get());
        return text(200, "OK");
    }

    /** {@code /debug/connections}: istiod's AdsClients without details: id, time and address per connection. */
    @GET
    @Path("connections")
    @Produces(MediaType.APPLICATION_JSON)
    public String connections() {
        return XdsDebugJson.adsClients(sortedConnections(), false).toString();
    }

    /** Connections in connection-id order, so repeated reads list them alike. */
    private List<Connection> sortedConnections() {
        return xds.connections().stream()
                .sorted(Comparator.comparing(Connection::id)).toList();
    }

    private static Response text(int status, String body) {
        return Response.status(status).type(MediaType.TEXT_PLAIN).entity(body).build();
    }

    private static Response json(String body) {
        return Response.ok(body, MediaType.APPLICATION_JSON).build();
    }

    /** The debug endpoint names (each {@code /debug/<name>}), sorted, without "list". */
    public static List<String> endpointNames() {
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
        return JsonParser.parseString(json).toString();
    }
}
