package io.meshpilot.admin;

import io.meshpilot.lifecycle.BuildInfo;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import java.util.Map;

/** {@code GET /version} on the monitoring port: build information as JSON. */
@ApplicationScoped
@Path("/version")
public class VersionResource {
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public Map<String, String> version() {
        return BuildInfo.current().asMap();
    }
}
