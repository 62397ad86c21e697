package io.meshpilot.bootstrap;

import io.helidon.config.mp.MpConfigSources;
import io.helidon.microprofile.server.Server;
import io.meshpilot.security.CaSetup;
import io.meshpilot.security.ServingCertificate;
import io.meshpilot.security.ca.CaLoadException;
import jakarta.enterprise.inject.spi.CDI;
import java.lang.System.Logger.Level;
import java.net.BindException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.spi.ConfigProviderResolver;

/**
 * Starts and stops one MeshPilot server in this JVM: makes what must exist before the CDI
 * container (args, the serving certificate, the Helidon config derived from the flags),
 * starts Helidon MP, whose observers then start the components in DESIGN order, and on
 * shutdown drains before stopping. Used by {@code pilot-discovery discovery} and by tests.
 */
public final class MeshPilotServer implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger("io.meshpilot.startup");

    private final PilotArgs args;
    private final Server server;
    private final AtomicBoolean stopped = new AtomicBoolean();

    private MeshPilotServer(PilotArgs args, Server server) {
        this.args = args;
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

    /** Starts a server; throws with one clear line when any component cannot start. */
    public static MeshPilotServer start(PilotArgs args) throws StartupFailure {
        LOG.log(Level.INFO, "mode=" + args.mode().label() + " (" + args.modeReason() + ")"
                + " configDir=" + (args.configDir() == null ? "(none)" : args.configDir())
                + " registries=" + (args.registries().isEmpty() ? "[ServiceEntry]" : args.registries() + "+ServiceEntry"));
        try {
            CaSetup ca;
            try {
                ca = CaSetup.create(args);
            } catch (CaLoadException e) {
                throw new ComponentStartException(Component.CA, e.getMessage(), e);
            }
            ServingCertificate cert = ca.serving();
            BootstrapContext.install(new BootstrapContext(args, ca));
            Config config = ConfigProviderResolver.instance().getBuilder()
                    .withSources(MpConfigSources.create("meshpilot-flags", HelidonConfig.fromArgs(args, cert)))
                    .addDefaultSources()
                    .addDiscoveredSources()
                    .addDiscoveredConverters()
                    .build();
            Server server = Server.builder().config(config).build();
            server.start();
            return new MeshPilotServer(args, server);
        } catch (Exception | LinkageError e) {
            closeContainerQuietly();
            BootstrapContext.clear();
            throw new StartupFailure(describe(e, args), e);
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

    /** A bean of the running server (tests and the CLI). */
    public <T> T bean(Class<T> type) {
        return CDI.current().select(type).get();
    }

    /** Bound port per listener. */
    public Map<String, Integer> ports() {
        return bean(Servers.class).ports();
    }

    public PilotArgs args() {
        return args;
    }

    /** Drains (readiness off, gRPC calls may finish up to {@code drain}) then stops everything. */
    public void shutdown(Duration drain) {
        if (!stopped.compareAndSet(false, true)) {
            return;
        }
        try {
            boolean clean = bean(Lifecycle.class).drain(drain);
            if (!clean) {
                LOG.log(Level.INFO, "drain deadline reached; closing the remaining gRPC calls");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "drain failed: " + e.getMessage());
        }
        try {
            bean(Servers.class).stopGrpc();
        } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "stopping gRPC failed: " + e.getMessage());
        }
        try {
            server.stop();
        } finally {
            BootstrapContext.clear();
        }
    }

    /** Stops without draining (tests). */
    @Override
    public void close() {
        shutdown(Duration.ZERO);
    }

    private static void closeContainerQuietly() {
        try {
            if (CDI.current() instanceof AutoCloseable c) {
                c.close();
            }
        } catch (Exception | LinkageError ignored) {
            // no container was started, or it is already closed
        }
    }

}
