package io.meshpilot.floor;

import io.helidon.microprofile.server.Server;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import java.lang.management.ManagementFactory;

/**
 * A bare Helidon MP application: CDI, one JAX-RS resource, one listener. What it takes to
 * start is the least any Helidon MP server takes on the same machine and JDK, so it is the
 * floor under MeshPilot's start-up figure.
 */
@ApplicationScoped
@Path("/ready")
public class FloorApplication {
    @GET
    public String ready() {
        return "ok";
    }

    public static void main(String[] args) {
        Server server = Server.builder().port(0).build().start();
        System.out.println("floor ready: " + ManagementFactory.getRuntimeMXBean().getUptime()
                + " ms since JVM start, port " + server.port());
        server.stop();
    }
}
