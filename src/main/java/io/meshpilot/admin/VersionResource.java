package io.meshpilot.admin;

import io.meshpilot.lifecycle.BuildInfo;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

/**
 * {@code GET /version} on the monitoring port: istiod's plain text {@code version-revision-status},
 * which {@code istioctl version} splits on its last dashes.
 */
@ApplicationScoped
@Path("/version")
public class VersionResource {
    @GET
    @Produces(MediaType.TEXT_PLAIN)
    public String version() {
        return BuildInfo.current().shortForm();
    }
}
