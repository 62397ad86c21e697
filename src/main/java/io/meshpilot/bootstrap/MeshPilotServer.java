package io.meshpilot.bootstrap;

import io.meshpilot.features.ListenerNames;
import io.meshpilot.lifecycle.ComponentStartException;
import io.meshpilot.lifecycle.ExitCodes;
import io.meshpilot.lifecycle.StartupRecorder;
import java.lang.System.Logger.Level;
import java.net.BindException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * One MeshPilot server as a process sees it: started from parsed args through
 * {@link PilotServer} (the start-up wiring), stopped on SIGTERM/SIGINT after draining, with
 * one line for the operator when start-up fails. Used by {@code pilot-discovery discovery}
 * and by tests.
 */
public final class MeshPilotServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    private final PilotServer server;
    private final AtomicBoolean stopped = new AtomicBoolean();

    private MeshPilotServer(PilotServer server) {
        this.server = server;
    }

    /** Start-up failed; the message is the one line for the operator. */
    public static final class StartupFailure extends Exception {
        StartupFailure(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Runs until SIGTERM/SIGINT, drains, and returns the process exit code. The signal
     * handler is installed before start-up, so a signal that arrives while starting still
     * leads to an orderly stop; a second signal exits at once.
     */
    public static int runUntilShutdown(PilotArgs args) {
        CountDownLatch signalled = new CountDownLatch(1);
        AtomicBoolean once = new AtomicBoolean();
        sun.misc.SignalHandler handler = sig -> {
            if (!once.compareAndSet(false, true)) {
                LOG.log(Level.WARNING, "second SIG" + sig.getName() + ": exiting without draining");
                Runtime.getRuntime().halt(ExitCodes.FORCED);
            }
            LOG.log(Level.INFO, "SIG" + sig.getName() + " received: shutting down (drain up to "
                    + args.shutdownDuration().toMillis() + " ms)");
            signalled.countDown();
        };
        sun.misc.Signal.handle(new sun.misc.Signal("TERM"), handler);
        sun.misc.Signal.handle(new sun.misc.Signal("INT"), handler);
        MeshPilotServer s;
        try {
            s = start(args);
        } catch (StartupFailure e) {
            LOG.log(Level.ERROR, "start-up failed: " + e.getMessage());
            System.err.println("pilot-discovery: start-up failed: " + e.getMessage());
            return ExitCodes.FAILURE;
        }
        try {
            signalled.await();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        s.shutdown(args.shutdownDuration());
        LOG.log(Level.INFO, "stopped");
        return ExitCodes.OK;
    }

    /** Starts a server with every listener; throws with one clear line when any component cannot start. */
    public static MeshPilotServer start(PilotArgs args) throws StartupFailure {
        return start(args, PilotServer.Hosting.FULL, s -> { });
    }

    /**
     * As {@link #start(PilotArgs)}, with {@code beforeListening} run on the built server
     * before any listener binds: an embedding application adds its own gRPC services there.
     */
    public static MeshPilotServer start(PilotArgs args, Consumer<PilotServer> beforeListening)
            throws StartupFailure {
        return start(args, PilotServer.Hosting.FULL, beforeListening);
    }

    /**
     * Starts a server that serves gRPC only (xDS and the CA), for a second server in a JVM
     * whose HTTP host is taken (Helidon MP runs one container per JVM).
     */
    public static MeshPilotServer startGrpcOnly(PilotArgs args) throws StartupFailure {
        return start(args, PilotServer.Hosting.GRPC_ONLY, s -> { });
    }

    private static MeshPilotServer start(PilotArgs args, PilotServer.Hosting hosting,
                                         Consumer<PilotServer> beforeListening) throws StartupFailure {
        LOG.log(Level.INFO, "mode=" + args.mode().label() + " (" + args.modeReason() + ")"
                + " configDir=" + (args.configDir() == null ? "(none)" : args.configDir())
                + " registries=" + (args.registries().isEmpty() ? "[ServiceEntry]" : args.registries() + "+ServiceEntry"));
        PilotServer server = null;
        try {
            server = PilotServer.newServer(args, hosting);
            beforeListening.accept(server);
            server.start();
            return new MeshPilotServer(server);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            closeQuietly(server);
            throw new StartupFailure("interrupted while starting", e);
        } catch (Exception | LinkageError e) {
            closeQuietly(server);
            throw new StartupFailure(describe(e, args), e);
        }
    }

    private static void closeQuietly(PilotServer server) {
        if (server != null) {
            server.close();
        }
    }

    /** The one line for a failed start: the component and cause, or the port that is taken. */
    static String describe(Throwable e, PilotArgs args) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof ComponentStartException c) {
                return c.getMessage();
            }
        }
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof BindException || (t.getMessage() != null && t.getMessage().contains("Address already in use"))) {
                return "servers: cannot bind a listener, address already in use: " + StartupRecorder.oneLine(e)
                        + " (listeners: " + args.listeners().byName().entrySet().stream()
                        .filter(en -> en.getValue() != null)
                        .map(en -> ListenerNames.display(en.getKey()) + "=" + en.getValue()).toList() + ")";
            }
        }
        return StartupRecorder.oneLine(e);
    }

    /** The wiring of the running server: its components (tests and the CLI). */
    public PilotServer server() {
        return server;
    }

    /** Bound port per listener. */
    public Map<String, Integer> ports() {
        return server.components().state().ports();
    }

    public PilotArgs args() {
        return server.components().args();
    }

    /** Drains (readiness off, gRPC calls may finish up to {@code drain}) then stops everything. */
    public void shutdown(Duration drain) {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        try {
            boolean clean = server.drain(drain);
            if (!clean) {
                LOG.log(Level.INFO, "drain deadline reached; closing the remaining gRPC calls");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "drain failed: " + e.getMessage());
        }
        server.close();
    }

    /** Stops without draining (tests). */
    @Override
    public void close() {
        shutdown(Duration.ZERO);
    }
}
