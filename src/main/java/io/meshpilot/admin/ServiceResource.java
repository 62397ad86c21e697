package io.meshpilot.admin;

import com.google.gson.JsonArray;
import com.google.gson.JsonObject;
import io.meshpilot.model.EndpointIndex;
import io.meshpilot.model.Environment;
import io.meshpilot.model.IstioEndpoint;
import io.meshpilot.model.Service;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;

/**
 * {@code /api/v1/services}: what the registries know, with each service's ports and the
 * endpoints proxies will be sent (from the endpoint index).
 */
@ApplicationScoped
@Path("/api/v1/services")
public class ServiceResource {
    @Inject
    Environment environment;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public String list(@QueryParam("namespace") String namespace) {
        JsonArray out = new JsonArray();
        for (Service s : environment.serviceDiscovery().services()) {
            if (namespace == null || namespace.isEmpty() || namespace.equals(s.namespace())) {
                out.add(RegistryJson.service(s, endpoints(s)));
            }
        }
        return out.toString();
    }

    @GET
    @Path("{namespace}/{hostname}")
    @Produces(MediaType.APPLICATION_JSON)
    public Response get(@PathParam("namespace") String namespace, @PathParam("hostname") String hostname) {
        return environment.serviceDiscovery().services().stream()
                .filter(s -> s.hostname().equals(hostname) && s.namespace().equals(namespace))
                .findFirst()
                .map(s -> Response.ok(RegistryJson.service(s, endpoints(s)).toString(), MediaType.APPLICATION_JSON).build())
                .orElseGet(() -> {
                    JsonObject err = new JsonObject();
                    err.addProperty("error", "no service " + hostname + " in namespace " + namespace);
                    return Response.status(Response.Status.NOT_FOUND).type(MediaType.APPLICATION_JSON)
                            .entity(err.toString()).build();
                });
    }

    private List<IstioEndpoint> endpoints(Service s) {
        EndpointIndex.Shards shards = environment.endpointIndex().shards(s.hostname(), s.namespace());
        return shards == null ? List.of() : shards.all();
    }
}
