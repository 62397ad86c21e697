package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.xds.Connection;
import io.meshpilot.xds.DiscoveryServer;
import io.meshpilot.xds.TypeUrls;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.Comparator;
import java.util.Locale;

/** {@code /api/v1/proxies}: connected proxies and, per type, where their config stands. */
@ApplicationScoped
@Path("/api/v1/proxies")
public class ProxyResource {
    @Inject
    DiscoveryServer xds;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public String list() {
        JsonArray out = new JsonArray();
        xds.connections().stream().sorted(Comparator.comparing(Connection::id))
                .forEach(c -> out.add(proxy(c)));
        return out.toString();
    }

    @GET
    @Path("{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response get(@PathParam("id") String id) {
        return xds.connections().stream().filter(c -> c.proxy().id().equals(id) || c.id().equals(id)).findFirst()
                .map(c -> Response.ok(proxy(c).toString(), MediaType.APPLICATION_JSON).build())
                .orElseGet(() -> {
                    JsonObject e = new JsonObject();
                    e.addProperty("error", "no connected proxy " + id);
                    return Response.status(Response.Status.NOT_FOUND).type(MediaType.APPLICATION_JSON)
                            .entity(e.toString()).build();
                });
    }

    static JsonObject proxy(Connection c) {
        JsonObject o = new JsonObject();
        o.addProperty("id", c.proxy().id());
        o.addProperty("connection", c.id());
        o.addProperty("type", c.proxy().type().name().toLowerCase(Locale.ROOT));
        o.addProperty("namespace", c.proxy().namespace());
        o.addProperty("generator", c.proxy().proxyless() ? "grpc" : "envoy");
        o.addProperty("protocol", c.delta() ? "delta" : "sotw");
        o.addProperty("address", c.peer());
        o.addProperty("connectedAt", c.connectedAt().toString());
        o.addProperty("unsent", c.unsent());
        o.addProperty("replaced", c.replaced());
        JsonObject types = new JsonObject();
        c.watches().forEach((type, w) -> {
            JsonObject t = new JsonObject();
            t.addProperty("subscribed", w.wildcard() ? -1 : w.names().size());
            t.addProperty("versionSent", w.versionSent());
            t.addProperty("versionAcked", w.versionAcked());
            t.addProperty("synced", w.synced());
            if (w.lastSent() != null) {
                t.addProperty("lastPush", w.lastSent().toString());
            }
            if (!w.nackError().isEmpty()) {
                t.addProperty("lastNack", w.nackError());
                t.addProperty("nackVersion", w.nackVersion());
            }
            types.add(TypeUrls.shortName(type), t);
        });
        o.add("types", types);
        return o;
    }
}
