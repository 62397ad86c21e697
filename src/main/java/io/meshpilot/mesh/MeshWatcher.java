package io.meshpilot.mesh;

import io.meshpilot.api.mesh.v1alpha1.MeshConfig;
import io.meshpilot.api.mesh.v1alpha1.MeshNetworks;
import io.meshpilot.model.Environment;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Component 3: loads {@code --meshConfig} and {@code --networksConfig} into the
 * {@link Environment} and keeps watching them. A bad file at start stops start-up (file and
 * line named); a bad change while running is logged and the previous config stays in force.
 */
public final class MeshWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(MeshWatcher.class.getName());
    /** Quiet time that merges a multi-step file write into one reload. */
    static final Duration DEBOUNCE = Duration.ofMillis(100);
    static final Duration POLL = Duration.ofSeconds(1);

    /** Which file a reload concerns. */
    public enum Kind { MESH, NETWORKS }

    /** Observer of reload outcomes (tests wait on these instead of sleeping). */
    public interface Listener {
        void applied(Kind kind, Path file);

        void rejected(Kind kind, Path file, MeshConfigException error);
    }

    private final Environment environment;
    private final Path meshFile;
    private final Path networksFile;
    private final MeshConfigLoader loader = new MeshConfigLoader();
    private final List<Listener> listeners = new CopyOnWriteArrayList<>();
    private volatile FileWatcher watcher;
    private volatile MeshConfigException lastRejection;

    /**
     * @param meshFile     --meshConfig (absent: istiod's defaults)
     * @param networksFile --networksConfig (absent: no networks)
     */
    public MeshWatcher(Environment environment, Path meshFile, Path networksFile) {
        this.environment = environment;
        this.meshFile = meshFile;
        this.networksFile = networksFile;
    }

    /**
     * Loads both files into the Environment and starts watching them; returns what the
     * start-up log says.
     *
     * @throws MeshConfigException when a file is invalid (file and line named)
     * @throws IOException         when the files cannot be watched
     */
    public String start() throws MeshConfigException, IOException {
        environment.setMesh(loader.loadMesh(meshFile));
        environment.setNetworks(loader.loadNetworks(networksFile));
        watcher = new FileWatcher("mesh", List.of(meshFile, networksFile), DEBOUNCE, POLL, this::reload);
        return "meshConfig=" + describe(meshFile) + " networksConfig=" + describe(networksFile)
                + " trustDomain=" + environment.mesh().getTrustDomain();
    }

    private static String describe(Path file) {
        return file + (Files.exists(file) ? "" : " (absent: defaults)");
    }

    private void reload(Set<Path> changed) {
        for (Path p : changed) {
            if (p.equals(meshFile.toAbsolutePath().normalize())) {
                apply(Kind.MESH, meshFile);
            } else {
                apply(Kind.NETWORKS, networksFile);
            }
        }
    }

    private void apply(Kind kind, Path file) {
        try {
            if (kind == Kind.MESH) {
                MeshConfig next = loader.loadMesh(file);
                boolean changed = !next.equals(environment.mesh());
                environment.setMesh(next);
                LOG.log(Level.INFO, "mesh config reloaded file=" + file + (changed ? "" : " (no effective change)"));
            } else {
                MeshNetworks next = loader.loadNetworks(file);
                environment.setNetworks(next);
                LOG.log(Level.INFO, "mesh networks reloaded file=" + file + " networks=" + next.getNetworksCount());
            }
            lastRejection = null;
            listeners.forEach(l -> l.applied(kind, file));
        } catch (MeshConfigException e) {
            lastRejection = e;
            LOG.log(Level.ERROR, "rejected " + kind.name().toLowerCase() + " config change, keeping the previous one: "
                    + e.getMessage());
            listeners.forEach(l -> l.rejected(kind, file, e));
        }
    }

    public void addListener(Listener l) {
        listeners.add(l);
    }

    public void removeListener(Listener l) {
        listeners.remove(l);
    }

    /** The last rejected change, null once a later change applied. */
    public MeshConfigException lastRejection() {
        return lastRejection;
    }

    @Override
    public void close() {
        FileWatcher w = watcher;
        if (w != null) {
            w.close();
        }
    }
}
