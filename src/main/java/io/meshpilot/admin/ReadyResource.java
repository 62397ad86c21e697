package io.meshpilot.admin;

import io.meshpilot.lifecycle.Readiness;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.util.List;

/** {@code GET /ready}: 200 when every readiness probe passes, else 503 naming the failing ones. */
@ApplicationScoped
@Path("/ready")
public class ReadyResource {

    /** The body of both answers. */
    public record ReadyStatus(String status, List<String> failing) {
    }

    @Inject
    Readiness readiness;

    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Response ready() {
        List<String> failing = readiness.failing();
        return failing.isEmpty()
                ? Response.ok(new ReadyStatus("ready", failing)).build()
                : Response.status(Response.Status.SERVICE_UNAVAILABLE).entity(new ReadyStatus("not ready", failing)).build();
    }
}
