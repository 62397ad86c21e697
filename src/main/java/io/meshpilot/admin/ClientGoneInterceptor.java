package io.meshpilot.admin;

import io.meshpilot.lifecycle.StartupRecorder;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.Request;
import jakarta.ws.rs.core.UriInfo;
import jakarta.ws.rs.ext.Provider;
import jakarta.ws.rs.ext.WriterInterceptor;
import jakarta.ws.rs.ext.WriterInterceptorContext;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;

/**
 * A client that leaves before its answer is written (curl piped into head, a scrape that
 * timed out) is not an error of ours: it is logged as one INFO line with the request and the
 * cause, the stack at DEBUG, and the rest of the answer is dropped. Left to Jersey, the failed
 * write is an ERROR with a stack of a hundred lines ("An I/O error has occurred while writing
 * a response message entity"); istiod's HTTP server does not log it at all.
 */
@Provider
public class ClientGoneInterceptor implements WriterInterceptor {
    private static final System.Logger LOG = System.getLogger(ClientGoneInterceptor.class.getName());
    /** Set by Helidon's JAX-RS service on every request. */
    private static final String REMOTE_HOST = "io.helidon.jaxrs.remote-host";
    private static final String REMOTE_PORT = "io.helidon.jaxrs.remote-port";

    @Context
    UriInfo uri;

    @Context
    Request request;

    @Override
    public void aroundWriteTo(WriterInterceptorContext context) throws IOException {
        String who = request.getMethod() + " " + uri.getRequestUri().getRawPath() + " from "
                + context.getProperty(REMOTE_HOST) + ":" + context.getProperty(REMOTE_PORT);
        context.setOutputStream(new DroppedWhenGone(context.getOutputStream(), who));
        context.proceed();
    }

    /** Passes writes on until one fails; then logs once and drops the rest. */
    private static final class DroppedWhenGone extends OutputStream {
        private final OutputStream out;
        private final String who;
        private boolean gone;

        DroppedWhenGone(OutputStream out, String who) {
            this.out = out;
            this.who = who;
        }

        @Override
        public void write(int b) throws IOException {
            write(new byte[] {(byte) b}, 0, 1);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (!gone) {
                attempt(() -> out.write(b, off, len));
            }
        }

        @Override
        public void flush() throws IOException {
            if (!gone) {
                attempt(out::flush);
            }
        }

        @Override
        public void close() throws IOException {
            if (gone) {
                try {
                    out.close(); // releases Helidon's wait for the answer; what it still writes fails again
                } catch (IOException | UncheckedIOException ignored) {
                    // the client is gone; logged once already
                }
            } else {
                attempt(out::close);
            }
        }

        private void attempt(Write write) throws IOException {
            try {
                write.run();
            } catch (IOException | UncheckedIOException e) {
                gone = true;
                LOG.log(Level.INFO, who + ": the client went away before the answer was written: "
                        + StartupRecorder.oneLine(e));
                LOG.log(Level.DEBUG, who + ": write failed", e);
            }
        }
    }

    @FunctionalInterface
    private interface Write {
        void run() throws IOException;
    }
}
