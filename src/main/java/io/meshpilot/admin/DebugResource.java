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
 * istiod's debug endpoints under {@code /debug}, on the http and monitoring listeners. Later
 * issues add configz, registryz, syncz, config_dump ... here; {@code /debug/list} names
 * whatever this class serves, so it cannot drift.
 */
@ApplicationScoped
@Path("/debug")
public class DebugResource {
    @Inject
    Environment environment;

    @Inject
    io.meshpilot.config.ConfigController configs;

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

    static List<String> endpointNames() {
        TreeSet<String> names = new TreeSet<>();
        for (Method m : DebugResource.class.getDeclaredMethods()) {
            Path p = m.getAnnotation(Path.class);
            if (p != null && m.isAnnotationPresent(GET.class) && !p.value().equals("list")) {
                names.add(p.value());
            }
        }
        return List.copyOf(names);
    }

    /** JsonFormat only pretty-prints; istiod answers compact JSON unless ?pretty. */
    private static String compact(String json) {
        return com.google.gson.JsonParser.parseString(json).toString();
    }
}
