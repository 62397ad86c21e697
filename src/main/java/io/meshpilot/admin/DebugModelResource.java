package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonElement;
import com.google.gson.JsonNull;
import com.google.gson.JsonObject;
import com.google.gson.JsonParser;
import com.google.protobuf.Any;
import com.google.protobuf.InvalidProtocolBufferException;
import com.google.protobuf.util.JsonFormat;
import io.envoyproxy.envoy.config.core.v3.TypedExtensionConfig;
import io.envoyproxy.envoy.extensions.filters.http.wasm.v3.Wasm;
import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.networking.v1alpha3.DestinationRule;
import io.meshpilot.api.networking.v1alpha3.OutboundTrafficPolicy;
import io.meshpilot.api.networking.v1alpha3.Sidecar;
import io.meshpilot.api.telemetry.v1alpha1.Telemetry;
import io.meshpilot.api.workload.security.Authorization;
import io.meshpilot.config.Config;
import io.meshpilot.config.controller.ConfigController;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.features.PilotFeatures;
import io.meshpilot.inject.SidecarInjector;
import io.meshpilot.model.Environment;
import io.meshpilot.model.NetworkGateway;
import io.meshpilot.model.Proxy;
import io.meshpilot.model.ProxyScope;
import io.meshpilot.model.PushContext;
import io.meshpilot.model.Service;
import io.meshpilot.networking.EnvoyTypes;
import io.meshpilot.networking.telemetry.TelemetrySelection;
import io.meshpilot.registry.ambient.ZtunnelPolicies;
import io.meshpilot.xds.CachedResource;
import io.meshpilot.xds.Connection;
import io.meshpilot.xds.DiscoveryServer;
import io.meshpilot.xds.TypeUrls;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * istiod's debug endpoints over the model and the xDS state (pilot/pkg/xds/debug.go): typed
 * config dumps (ecdsz, edsz, ndsz), the XDS cache, a proxy's Sidecar scope, the config kinds,
 * authorization and telemetry policies, the push context and network gateways. Each answers
 * with istiod's JSON shape ({@code ?pretty} indents); per-proxy ones take {@code proxyID} and
 * answer istiod's 400 without it and 404 when no connection matches.
 */
@ApplicationScoped
@Path("/debug")
@PrettyJson
public class DebugModelResource {
    static final String NAME_TABLE = "type.googleapis.com/istio.networking.nds.v1.NameTable";
    static final String WASM_HTTP_FILTER = "type.googleapis.com/envoy.extensions.filters.http.wasm.v3.Wasm";
    static final String NO_PROXY_ID = "You must provide a proxyID in the query string\n";
    /** istiod's SidecarScope name when no Sidecar resource applies. */
    static final String DEFAULT_SIDECAR = "default-sidecar";

    @Inject
    SidecarInjector injector;

    @Inject
    Environment environment;

    @Inject
    ConfigController configs;

    @Inject
    DiscoveryServer xds;

    @Inject
    DebugResource debug;

    @Inject
    PilotFeatures features;

    /** {@code /debug/ecdsz?proxyID=}: the extension configs that proxy gets now, as an Envoy ConfigDump. */
    @GET
    @Path("ecdsz")
    @Produces(MediaType.APPLICATION_JSON)
    public Response ecdsz(@QueryParam("proxyID") String proxyId) {
        return typedConfigDump(proxyId, TypeUrls.EXTENSION_CONFIG);
    }

    /** {@code /debug/edsz?proxyID=}: the endpoint assignments that proxy gets now, as an Envoy ConfigDump. */
    @GET
    @Path("edsz")
    @Produces(MediaType.APPLICATION_JSON)
    public Response edsz(@QueryParam("proxyID") String proxyId) {
        return typedConfigDump(proxyId, TypeUrls.ENDPOINT);
    }

    /**
     * {@code /debug/ndsz?proxyID=}: the DNS name table. Nothing here serves NDS, so the dump has
     * no configs, as istiod answers for a type with no generator or no watch.
     */
    @GET
    @Path("ndsz")
    @Produces(MediaType.APPLICATION_JSON)
    public Response ndsz(@QueryParam("proxyID") String proxyId) {
        return typedConfigDump(proxyId, NAME_TABLE);
    }

    /** {@code /debug/endpointz}: istiod keeps it as the obsolete name of endpointShardz, with the same answer. */
    @GET
    @Path("endpointz")
    @Produces(MediaType.APPLICATION_JSON)
    public String endpointz() {
        return debug.endpointShardz();
    }

    /**
     * {@code /debug/cachez}: type URL to the names of the cached resources; {@code ?sizes=true}
     * type URL to their total serialized size (istiod's ByteCount, plus {@code total});
     * {@code ?clear=true} empties the cache.
     */
    @GET
    @Path("cachez")
    @Produces({MediaType.APPLICATION_JSON, MediaType.TEXT_PLAIN})
    public Response cachez(@QueryParam("sizes") String sizes, @QueryParam("clear") String clear) {
        if (clear != null && !clear.isEmpty()) {
            xds.clearCache();
            return Response.ok("Cache cleared\n", MediaType.TEXT_PLAIN).build();
        }
        List<CachedResource> snapshot = xds.cacheSnapshot();
        JsonObject out = new JsonObject();
        if (sizes != null && !sizes.isEmpty()) {
            Map<String, Long> bytes = new TreeMap<>();
            long total = 0;
            for (CachedResource r : snapshot) {
                bytes.merge(r.typeUrl(), (long) r.bytes(), Long::sum);
                total += r.bytes();
            }
            bytes.forEach((type, n) -> out.addProperty(type, byteCount(n)));
            out.addProperty("total", byteCount(total));
            return json(out);
        }
        Map<String, List<String>> names = new TreeMap<>();
        snapshot.forEach(r -> names.computeIfAbsent(r.typeUrl(), t -> new ArrayList<>()).add(r.name()));
        names.forEach((type, n) -> out.add(type, RegistryJson.strings(n)));
        return json(out);
    }

    /**
     * {@code /debug/sidecarz?proxyID=}: the Sidecar scope of that proxy (istiod's
     * SidecarScope.MarshalJSON keys): the Sidecar that applies, the services it sees, by
     * hostname and per egress listener, and their DestinationRules.
     */
    @GET
    @Path("sidecarz")
    @Produces({MediaType.APPLICATION_JSON, MediaType.TEXT_PLAIN})
    public Response sidecarz(@QueryParam("proxyID") String proxyId) {
        Lookup found = lookup(proxyId);
        if (found.error() != null) {
            return found.error();
        }
        PushContext push = xds.currentPushContext();
        Proxy proxy = found.connection().proxy();
        ProxyScope scope = push.scope(proxy);
        Sidecar sidecar = scope.sidecar() == null ? null : (Sidecar) scope.sidecar().spec();
        JsonObject out = new JsonObject();
        out.addProperty("version", Long.toString(push.version()));
        out.addProperty("name", scope.sidecar() == null ? DEFAULT_SIDECAR : scope.sidecar().name());
        out.addProperty("namespace", scope.namespace());
        out.add("outboundTrafficPolicy", IstioModelJson.message(outboundTrafficPolicy(sidecar)));
        List<Service> visible = push.services(scope);
        JsonArray services = new JsonArray();
        JsonObject byHostname = new JsonObject();
        JsonObject destinationRules = new JsonObject();
        for (Service s : visible) {
            JsonObject json = RegistryJson.service(s, null);
            services.add(json);
            byHostname.add(s.hostname(), json);
            push.destinationRule(s.hostname(), scope).ifPresent(dr -> destinationRules.add(s.hostname(),
                    IstioModelJson.array(List.of(consolidatedDestinationRule(dr)))));
        }
        out.add("services", services);
        JsonArray egressListenerServices = new JsonArray();
        for (ProxyScope.EgressListener listener : scope.egress()) {
            JsonArray imported = new JsonArray();
            push.services(scope, listener).forEach(s -> imported.add(byHostname.get(s.hostname())));
            egressListenerServices.add(imported);
        }
        out.add("egressListenerServices", egressListenerServices);
        out.add("servicesByHostname", byHostname);
        out.add("sidecar", IstioModelJson.message(sidecar));
        out.add("destinationRules", destinationRules);
        return json(out);
    }

    /**
     * {@code /debug/inject}: the injection templates in force, name to template text, as istiod
     * dumps its webhook's RawTemplates. The built-in {@code sidecar} template (the chart's
     * default, rendered natively) has no text; a ConfigMap's templates come as written.
     */
    @GET
    @Path("inject")
    @Produces(MediaType.APPLICATION_JSON)
    public String inject() {
        JsonObject out = new JsonObject();
        injector.settings().config().templates().forEach(out::addProperty);
        return out.toString();
    }

    /** {@code /debug/resourcesz}: the config kinds this server knows, as istiod's GroupVersionKind list. */
    @GET
    @Path("resourcesz")
    @Produces(MediaType.APPLICATION_JSON)
    public String resourcesz() {
        JsonArray out = new JsonArray();
        for (Schema s : configs.schemas().all()) {
            JsonObject gvk = new JsonObject();
            gvk.addProperty("group", s.gvk().group());
            gvk.addProperty("version", s.gvk().version());
            gvk.addProperty("kind", s.gvk().kind());
            out.add(gvk);
        }
        return out.toString();
    }

    /**
     * {@code /debug/ambientz}: the ambient index's workloads and services and ztunnel's
     * Authorizations, as istiod answers it ({@link AmbientzJson}); without PILOT_ENABLE_AMBIENT
     * all three are empty, as istiod's no-op ambient index.
     */
    @GET
    @Path("ambientz")
    @Produces(MediaType.APPLICATION_JSON)
    public String ambientz() {
        PilotFeatures.Ambient ambient = features.ambient();
        PushContext push = xds.currentPushContext();
        List<Authorization> policies = new ArrayList<>();
        if (ambient.enabled() && push != null) {
            policies.addAll(ZtunnelPolicies.convert(push.rootNamespace(), push.authorizationPolicyIndex(),
                    push.peerAuthentications(), ambient.dryRunAuthorizationPolicies()).authorizations().values());
        }
        // as ztunnel is sent them (istiod's Policies joins ImplicitWaypointPolicies)
        policies.addAll(environment.ambientIndexes().waypointPolicies().values());
        return AmbientzJson.of(environment.ambientIndexes().all(), policies).toString();
    }

    /** {@code /debug/authorizationz}: the push's AuthorizationPolicies (istiod's AuthorizationDebug). */
    @GET
    @Path("authorizationz")
    @Produces(MediaType.APPLICATION_JSON)
    public String authorizationz() {
        JsonObject out = new JsonObject();
        out.add("authorization_policies", authorizationPolicies(xds.currentPushContext()));
        return out.toString();
    }

    /**
     * {@code /debug/telemetryz}: the push's Telemetries (istiod's TelemetryDebug); with
     * {@code proxyID}, the Telemetries that apply to that proxy and what they carry (istiod's
     * computedTelemetries).
     */
    @GET
    @Path("telemetryz")
    @Produces({MediaType.APPLICATION_JSON, MediaType.TEXT_PLAIN})
    public Response telemetryz(@QueryParam("proxyID") String proxyId) {
        PushContext push = xds.currentPushContext();
        if (proxyId == null || proxyId.isEmpty()) {
            JsonObject out = new JsonObject();
            out.add("telemetries", telemetries(push));
            return json(out);
        }
        Lookup found = lookup(proxyId);
        if (found.error() != null) {
            return found.error();
        }
        return json(computedTelemetries(TelemetrySelection.applicable(found.connection().proxy(), push)));
    }

    /**
     * {@code /debug/pushcontext}: istiod's PushContextDebug (Go names, no json tags): the push's
     * AuthorizationPolicies and network gateways (those EDS uses, and all of them with
     * hostnames as {@code UnresolvedGateways}).
     */
    @GET
    @Path("pushcontext")
    @Produces(MediaType.APPLICATION_JSON)
    public String pushcontext() {
        PushContext push = xds.currentPushContext();
        if (push == null) {
            return ""; // istiod writes nothing before the first push
        }
        JsonObject out = new JsonObject();
        out.add("AuthorizationPolicies", authorizationPolicies(push));
        out.add("NetworkGateways", gateways(push.networkGateways().all()));
        out.add("UnresolvedGateways", gateways(push.networkGateways().unresolved()));
        return out.toString();
    }

    /** {@code /debug/networkz}: the cross-network gateways EDS uses (istiod's []NetworkGateway), [] before the first push. */
    @GET
    @Path("networkz")
    @Produces(MediaType.APPLICATION_JSON)
    public String networkz() {
        PushContext push = xds.currentPushContext();
        return gateways(push == null ? List.of() : push.networkGateways().all()).toString();
    }

    /**
     * istiod's NetworkGateway with Go's field names; HBONE (ambient) gateways and their
     * service accounts are not modelled, so HBONEPort is 0 and ServiceAccount empty.
     */
    private static JsonArray gateways(List<NetworkGateway> gateways) {
        JsonArray out = new JsonArray();
        for (NetworkGateway g : gateways) {
            JsonObject o = new JsonObject();
            o.addProperty("Network", g.network());
            o.addProperty("Cluster", g.cluster());
            o.addProperty("Addr", g.address());
            o.addProperty("Port", g.port());
            o.addProperty("HBONEPort", 0);
            JsonObject sa = new JsonObject();
            sa.addProperty("Namespace", "");
            sa.addProperty("Name", "");
            o.add("ServiceAccount", sa);
            out.add(o);
        }
        return out;
    }

    /** The connection a per-proxy request names, or istiod's error answer. */
    private record Lookup(Connection connection, Response error) {
    }

    private Lookup lookup(String proxyId) {
        if (proxyId == null || proxyId.isEmpty()) {
            return new Lookup(null, Response.status(400).type(MediaType.TEXT_PLAIN).entity(NO_PROXY_ID).build());
        }
        return xds.debugConnection(proxyId).map(c -> new Lookup(c, null)).orElseGet(() ->
                new Lookup(null, Response.status(404).type(MediaType.TEXT_PLAIN).entity(DebugResource.NOT_CONNECTED).build()));
    }

    /**
     * istiod's typedConfigDumpHandler: an Envoy admin ConfigDump ({@code configs}: the resources
     * as Anys) of one type for one proxy; {@code {}} when it watches none of that type. A Wasm
     * extension config is shown as its Wasm filter, as istiod does.
     */
    private Response typedConfigDump(String proxyId, String typeUrl) {
        Lookup found = lookup(proxyId);
        if (found.error() != null) {
            return found.error();
        }
        JsonFormat.Printer printer = JsonFormat.printer().usingTypeRegistry(EnvoyTypes.REGISTRY)
                .omittingInsignificantWhitespace();
        JsonArray dumped = new JsonArray();
        for (Any resource : xds.generated(found.connection(), typeUrl)) {
            try {
                dumped.add(JsonParser.parseString(printer.print(shown(resource))));
            } catch (InvalidProtocolBufferException e) {
                return Response.serverError().type(MediaType.TEXT_PLAIN)
                        .entity("cannot print " + resource.getTypeUrl() + ": " + e.getMessage()).build();
            }
        }
        JsonObject out = new JsonObject();
        if (!dumped.isEmpty()) {
            out.add("configs", dumped); // protojson leaves an empty repeated field out
        }
        return json(out);
    }

    private static Any shown(Any resource) throws InvalidProtocolBufferException {
        if (!resource.getTypeUrl().equals(TypeUrls.EXTENSION_CONFIG)) {
            return resource;
        }
        TypedExtensionConfig tec = resource.unpack(TypedExtensionConfig.class);
        if (tec.getTypedConfig().getTypeUrl().equals(WASM_HTTP_FILTER)) {
            return Any.pack(tec.getTypedConfig().unpack(Wasm.class));
        }
        return resource;
    }

    /** istiod's sc.OutboundTrafficPolicy: the Sidecar's when it sets one, else the mesh's mode. */
    private OutboundTrafficPolicy outboundTrafficPolicy(Sidecar sidecar) {
        if (sidecar != null && sidecar.hasOutboundTrafficPolicy()) {
            return sidecar.getOutboundTrafficPolicy();
        }
        boolean registryOnly = environment.mesh().getOutboundTrafficPolicy().getMode()
                == MeshConfig.OutboundTrafficPolicy.Mode.REGISTRY_ONLY;
        return OutboundTrafficPolicy.newBuilder().setMode(registryOnly ? OutboundTrafficPolicy.Mode.REGISTRY_ONLY
                : OutboundTrafficPolicy.Mode.ALLOW_ANY).build();
    }

    /** istiod's ConsolidatedDestRule.MarshalJSON: {@code exportTo} (a Go set), {@code rule}, {@code from}. */
    private static JsonObject consolidatedDestinationRule(Config rule) {
        JsonObject o = new JsonObject();
        var exportTo = ((DestinationRule) rule.spec()).getExportToList();
        if (exportTo.isEmpty()) {
            o.add("exportTo", JsonNull.INSTANCE);
        } else {
            JsonObject set = new JsonObject();
            exportTo.forEach(e -> set.add(e, new JsonObject()));
            o.add("exportTo", set);
        }
        o.add("rule", IstioModelJson.config(rule));
        o.add("from", IstioModelJson.array(List.of(IstioModelJson.namespacedName(rule))));
        return o;
    }

    /** model.AuthorizationPolicies: {@code namespace_to_policies} and {@code root_namespace}. */
    private JsonObject authorizationPolicies(PushContext push) {
        JsonObject byNamespace = new JsonObject();
        if (push != null) {
            new TreeSet<>(configs.store().list("AuthorizationPolicy", null).stream().map(Config::namespace)
                    .toList()).forEach(ns -> {
                        List<Config> policies = push.authorizationPolicies(ns);
                        if (!policies.isEmpty()) {
                            byNamespace.add(ns, IstioModelJson.array(policies.stream()
                                    .map(c -> (JsonElement) IstioModelJson.policy(c, true)).toList()));
                        }
                    });
        }
        JsonObject out = new JsonObject();
        out.add("namespace_to_policies", byNamespace);
        out.addProperty("root_namespace", push == null ? environment.mesh().getRootNamespace() : push.rootNamespace());
        return out;
    }

    /** model.Telemetries: {@code namespace_to_telemetries} and {@code root_namespace}. */
    private JsonObject telemetries(PushContext push) {
        JsonObject byNamespace = new JsonObject();
        if (push != null) {
            Map<String, JsonArray> grouped = new TreeMap<>();
            push.telemetries().forEach(c -> grouped.computeIfAbsent(c.namespace(), n -> new JsonArray())
                    .add(IstioModelJson.policy(c, false)));
            grouped.forEach(byNamespace::add);
        }
        JsonObject out = new JsonObject();
        out.add("namespace_to_telemetries", byNamespace);
        out.addProperty("root_namespace", push == null ? environment.mesh().getRootNamespace() : push.rootNamespace());
        return out;
    }

    /**
     * istiod's computedTelemetries: the telemetryKey (Root: the root namespace's; Proxy: the
     * proxy namespace's namespace-wide one; Namespace: the workload-selecting one; Workload
     * unused), then the Metrics, Logging (per level, with its key) and Tracing they carry.
     */
    private static JsonObject computedTelemetries(TelemetrySelection.Applicable a) {
        Config workload = a.workload().isEmpty() ? null : a.workload().getLast();
        JsonObject out = telemetryKey(a.root(), a.namespace(), workload);
        JsonArray metrics = new JsonArray();
        JsonArray logging = new JsonArray();
        JsonArray tracing = new JsonArray();
        List<Config> levels = new ArrayList<>();
        if (a.root() != null) {
            levels.add(a.root());
        }
        if (a.namespace() != null) {
            levels.add(a.namespace());
        }
        levels.addAll(a.workload());
        for (Config c : levels) {
            var t = (Telemetry) c.spec();
            t.getMetricsList().forEach(m -> metrics.add(IstioModelJson.message(m)));
            t.getTracingList().forEach(m -> tracing.add(IstioModelJson.message(m)));
            if (t.getAccessLoggingCount() > 0) {
                JsonObject level = c == a.root() ? telemetryKey(c, null, null) : telemetryKey(null, null, c);
                level.add("Logging", IstioModelJson.array(t.getAccessLoggingList().stream()
                        .map(IstioModelJson::message).toList()));
                logging.add(level);
            }
        }
        out.add("Metrics", metrics);
        out.add("Logging", logging);
        out.add("Tracing", tracing);
        return out;
    }

    /** telemetryKey's four NamespacedNames, promoted into the enclosing object as Go embeds them. */
    private static JsonObject telemetryKey(Config root, Config proxyNamespace, Config namespace) {
        JsonObject o = new JsonObject();
        o.add("Root", IstioModelJson.namespacedName(root));
        o.add("Proxy", IstioModelJson.namespacedName(proxyNamespace));
        o.add("Namespace", IstioModelJson.namespacedName(namespace));
        o.add("Workload", IstioModelJson.namespacedName(null));
        return o;
    }

    /** istiod's util.ByteCount: decimal units, one decimal ("512B", "1.5kB", "2.0MB"). */
    static String byteCount(long bytes) {
        if (bytes < 1000) {
            return bytes + "B";
        }
        long div = 1000;
        int exp = 0;
        for (long n = bytes / 1000; n >= 1000; n /= 1000) {
            div *= 1000;
            exp++;
        }
        return String.format(Locale.ROOT, "%.1f%cB", (double) bytes / div, "kMGTPE".charAt(exp));
    }

    private static Response json(JsonElement body) {
        return Response.ok(body.toString(), MediaType.APPLICATION_JSON).build();
    }
}
