package io.meshpilot.admin;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.Semaphore;
import javax.management.JMException;
import javax.management.ObjectName;
import jdk.jfr.Recording;

/**
 * The JVM's answer to istiod's {@code /debug/pprof}: a Flight Recorder recording on demand
 * instead of a CPU profile, a thread dump instead of the goroutine profile, and a class
 * histogram instead of the heap profile. Public JDK APIs only: jdk.jfr and the
 * DiagnosticCommand MBean of jdk.management (what {@code jcmd} calls). Not in
 * {@code /debug/list}, as istiod leaves pprof out of it.
 */
@ApplicationScoped
@Path("/debug/pprof")
public class ProfilingResource {
    /** Go's pprof default when {@code seconds} is absent. */
    static final int DEFAULT_SECONDS = 30;
    /** Longer recordings are refused: the request holds a connection for the whole time. */
    static final int MAX_SECONDS = 600;
    private static final String DIAGNOSTIC_COMMAND = "com.sun.management:type=DiagnosticCommand";

    /** One recording at a time, as Go allows one CPU profile at a time. */
    private final Semaphore recording = new Semaphore(1);

    /**
     * {@code /debug/pprof/profile?seconds=N}: records N seconds (default 30) with JFR's
     * "profile" settings, less what would give away the process's environment and command line
     * ({@link ProfileEvents}), and answers the .jfr file (JDK Mission Control, {@code jfr print}).
     */
    @GET
    @Path("profile")
    @Produces({"application/octet-stream", MediaType.TEXT_PLAIN})
    public Response profile(@QueryParam("seconds") String seconds) throws IOException, InterruptedException {
        int duration;
        try {
            duration = seconds == null || seconds.isEmpty() ? DEFAULT_SECONDS : Integer.parseInt(seconds.trim());
        } catch (NumberFormatException e) {
            return badRequest("seconds=" + seconds + ": not a whole number of seconds");
        }
        if (duration < 1 || duration > MAX_SECONDS) {
            return badRequest("seconds=" + seconds + ": must be between 1 and " + MAX_SECONDS);
        }
        if (!recording.tryAcquire()) {
            return Response.serverError().type(MediaType.TEXT_PLAIN)
                    .entity("Could not start a JFR recording: another profile is being recorded\n").build();
        }
        try (Recording r = new Recording(ProfileEvents.settings())) {
            r.setName("meshpilot /debug/pprof/profile");
            r.setToDisk(true);
            r.start();
            Thread.sleep(Duration.ofSeconds(duration));
            r.stop();
            return Response.ok(ProfileEvents.answer(r), "application/octet-stream")
                    .header("Content-Disposition", "attachment; filename=\"profile.jfr\"").build();
        } finally {
            recording.release(); // whatever failed above, the next profile may record
        }
    }

    /** {@code /debug/pprof/goroutine}: every thread's stack, as {@code jcmd <pid> Thread.print}. */
    @GET
    @Path("goroutine")
    @Produces(MediaType.TEXT_PLAIN)
    public String goroutine() throws JMException {
        return diagnosticCommand("threadPrint");
    }

    /** {@code /debug/pprof/heap}: instances and bytes per class, as {@code jcmd <pid> GC.class_histogram}. */
    @GET
    @Path("heap")
    @Produces(MediaType.TEXT_PLAIN)
    public String heap() throws JMException {
        return diagnosticCommand("gcClassHistogram");
    }

    private static String diagnosticCommand(String operation) throws JMException {
        Object out = ManagementFactory.getPlatformMBeanServer().invoke(new ObjectName(DIAGNOSTIC_COMMAND), operation,
                new Object[] {new String[0]}, new String[] {String[].class.getName()});
        return String.valueOf(out);
    }

    private static Response badRequest(String message) {
        return Response.status(400).type(MediaType.TEXT_PLAIN).entity(message + "\n").build();
    }
}
