package io.meshpilot.config.file;

import io.meshpilot.config.Config;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.schema.Schema;
import io.meshpilot.config.store.ReadOnlyConfigStore;
import io.meshpilot.config.store.MemoryConfigStore;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.ConfigKey;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Istio config from a directory tree ({@code --configDir}), watched. Every {@code .yaml},
 * {@code .yml} and {@code .json} file below it is read (hidden and editor temp files are
 * ignored); a file's objects change as a set. A document that does not validate is reported
 * and skipped, the file's other documents load; a file that stops parsing keeps its last
 * good objects until it parses again. When two files define the same object, the file that
 * sorts first owns it and the other gets an error. A path that cannot be read as config (a
 * directory without permission, a symlink loop, a FIFO, ...) is an error with its cause and
 * the rest of the tree loads; a directory that cannot be read keeps its files' objects.
 * Errors and warnings are logged when they appear, not at every scan. Read-only to API writes.
 */
public final class FileConfigSource extends ReadOnlyConfigStore implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(FileConfigSource.class.getName());
    /** Quiet time after a config file was written in place, before it is read. */
    static final Duration DEBOUNCE = Duration.ofMillis(100);
    /** Quiet time after files were only created, renamed or deleted (whole files). */
    static final Duration SETTLE = Duration.ofMillis(10);
    static final Duration POLL = Duration.ofSeconds(2);

    /**
     * What one file held when last read; {@code reusable}: its clean documents by text (see
     * ConfigParser); {@code readFailed}: opening or reading it failed (e.g. permission denied),
     * which a chmod can fix without changing size, mtime or inode, so it is read again on every scan.
     */
    private record FileState(long size, FileTime modified, Object fileKey,
                             List<Config> configs, List<DocumentError> errors, List<DocumentError> warnings,
                             boolean readFailed, Map<String, Config> reusable) {
        /** Same size, full-precision mtime and inode: the content was not touched. */
        boolean sameFile(BasicFileAttributes a) {
            return size == a.size() && modified.equals(a.lastModifiedTime()) && Objects.equals(fileKey, a.fileKey());
        }
    }

    /** Outcome of one scan, for listeners (tests wait on these). */
    public record ScanResult(int files, int configs, int errors, Set<ConfigKey> changed) {
    }

    private final Path root;
    private final ConfigParser parser;
    private final Map<Path, FileState> files = new HashMap<>();
    private final Map<ConfigKey, Path> owners = new HashMap<>();
    private final List<Consumer<ScanResult>> scanListeners = new CopyOnWriteArrayList<>();
    private volatile List<DocumentError> errors = List.of();
    private volatile List<DocumentError> warnings = List.of();
    /** Paths of the tree that could not be taken at the last scan (see {@link ConfigTree}). */
    private List<DocumentError> pathErrors = List.of();
    private boolean rootMissingLogged;
    private final Map<Path, WatchKey> watched = new HashMap<>();
    private final CompletableFuture<Void> synced = new CompletableFuture<>();
    private volatile boolean closed;
    private boolean initialized;
    private WatchService watch;
    private Thread watcher;

    public FileConfigSource(Path root, ConfigParser parser, Collection<Schema> schemas) {
        super(new MemoryConfigStore("files", schemas, false), "config from --configDir is read-only; edit the file");
        this.root = root.toAbsolutePath().normalize();
        this.parser = parser;
    }

    /** Files whose content is config: by extension, not hidden, not editor leftovers. */
    public static boolean isConfigFile(Path p) {
        String n = p.getFileName().toString();
        if (n.startsWith(".") || n.startsWith("#") || n.endsWith("~")) {
            return false;
        }
        String lower = n.toLowerCase(Locale.ROOT);
        return lower.endsWith(".yaml") || lower.endsWith(".yml") || lower.endsWith(".json");
    }

    /**
     * Reads the tree now; applies what changed. Thread-safe; scans are serialized. A directory
     * that cannot be read is reported and its files keep their objects (they may still be
     * there); the rest of the tree loads as usual.
     */
    public synchronized ScanResult scan() {
        ConfigTree.Listing listing = ConfigTree.list(root);
        Map<Path, BasicFileAttributes> present = listing.files();
        if (listing.rootMissing() != rootMissingLogged) {
            rootMissingLogged = listing.rootMissing();
            LOG.log(Level.WARNING, listing.rootMissing() ? "config dir " + root + " does not exist: no config from files"
                    : "config dir " + root + " exists again");
        }
        watch(listing.directories());
        boolean changed = files.keySet().removeIf(p -> !present.containsKey(p) && !listing.hidesFile(p));
        List<DocumentError> problems = listing.problems().stream().map(this::pathError).toList();
        if (!problems.equals(pathErrors)) {
            logChanges("config dir problem ", pathErrors, problems, Level.WARNING);
            pathErrors = problems;
            changed = true;
        }
        for (Map.Entry<Path, BasicFileAttributes> e : present.entrySet()) {
            FileState old = files.get(e.getKey());
            BasicFileAttributes attrs = e.getValue();
            if (old != null && old.sameFile(attrs) && !old.readFailed()) {
                continue;
            }
            FileState now = read(e.getKey(), attrs, old);
            files.put(e.getKey(), now);
            // a file that still cannot be read changes nothing: no work for the poll
            changed |= old == null || !old.sameFile(attrs) || !now.readFailed();
        }
        // the periodic poll finds nothing new most of the time: no work then
        return changed || !initialized ? apply() : new ScanResult(files.size(), owners.size(), errors.size(), Set.of());
    }

    private DocumentError pathError(ConfigTree.Problem p) {
        String where = p.path().equals(root) ? root.toString() : root.relativize(p.path()).toString();
        return new DocumentError(where, 0, 0, "", "", "", "", p.reason());
    }

    /** Logs what is new in {@code now} (at {@code level}) and what is gone since {@code before}. */
    private static void logChanges(String what, List<DocumentError> before, List<DocumentError> now, Level level) {
        Set<String> old = new HashSet<>();
        before.forEach(e -> old.add(e.toString()));
        Set<String> current = new HashSet<>();
        for (DocumentError e : now) {
            current.add(e.toString());
            if (!old.contains(e.toString())) {
                LOG.log(level, what + e);
            }
        }
        for (DocumentError e : before) {
            if (!current.contains(e.toString())) {
                LOG.log(Level.INFO, what + "resolved: " + e);
            }
        }
    }

    /** Watches directories listed for the first time; one that cannot be watched is still polled. */
    private void watch(Set<Path> directories) {
        watched.keySet().retainAll(directories);
        if (watch == null) {
            return;
        }
        for (Path d : directories) {
            WatchKey key = watched.get(d);
            if (key == null || !key.isValid()) { // new, or deleted and created again
                try {
                    watched.put(d, d.register(watch, StandardWatchEventKinds.ENTRY_CREATE,
                            StandardWatchEventKinds.ENTRY_MODIFY, StandardWatchEventKinds.ENTRY_DELETE));
                } catch (IOException | ClosedWatchServiceException e) {
                    LOG.log(Level.DEBUG, () -> "cannot watch " + d + " (" + e.getMessage() + "); polled every "
                            + POLL.toSeconds() + "s");
                }
            }
        }
    }

    private FileState read(Path path, BasicFileAttributes attrs, FileState old) {
        String source = root.relativize(path).toString();
        String text;
        try {
            if (attrs.size() > SafeYaml.MAX_CHARS) {
                return keep(old, attrs, new DocumentError(source, 0, 0, "", "", "", "",
                        "file larger than " + SafeYaml.MAX_CHARS + " bytes (" + attrs.size() + " bytes)"), false);
            }
            text = Utf8Text.read(path);
        } catch (Utf8Text.Invalid e) {
            return keep(old, attrs, new DocumentError(source, 0, 0, "", "", "", "", e.getMessage()), false);
        } catch (NoSuchFileException e) {
            return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), List.of(), List.of(), List.of(),
                    false, Map.of());
        } catch (IOException e) {
            return keep(old, attrs, new DocumentError(source, 0, 0, "", "", "", "",
                    "cannot read: " + ConfigTree.reason(e)), true);
        }
        // unchanged documents of a rewritten file are not parsed again
        ConfigParser.Result r = parser.parse(source, text, old == null ? Map.of() : old.reusable());
        for (ConfigParser.Skipped s : r.skipped()) {
            LOG.log(Level.INFO, "skipped non-Istio config file=" + source + " document=" + s.document() + " kind="
                    + s.gvk() + (s.name() == null ? "" : " name=" + s.name()));
        }
        for (DocumentError e : r.errors()) {
            LOG.log(Level.WARNING, "rejected config " + e);
        }
        // a rewritten file parses its documents with warnings again: only what is new is logged
        logChanges("config warning ", old == null ? List.of() : old.warnings(), r.warnings(), Level.WARNING);
        if (r.unreadable()) {
            return keep(old, attrs, r.errors().get(0), false);
        }
        return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), r.configs(), r.errors(),
                r.warnings(), false, r.reusable());
    }

    /**
     * A file that cannot be read now keeps the objects it had (nothing lost); the error is logged.
     * {@code readFailed}: the read itself failed (see {@link FileState}).
     */
    private static FileState keep(FileState old, BasicFileAttributes attrs, DocumentError error, boolean readFailed) {
        if (old == null || !old.errors().equals(List.of(error))) {
            LOG.log(Level.WARNING, "config file not read, " + (old == null || old.configs().isEmpty() ? "nothing loaded"
                    : "its " + old.configs().size() + " objects kept") + ": " + error);
        }
        List<Config> configs = old == null ? List.of() : old.configs();
        return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), configs, List.of(error),
                old == null ? List.of() : old.warnings(), readFailed, old == null ? Map.of() : old.reusable());
    }

    /** Recomputes the wanted objects from all files (sorted: first file owns) and syncs the store. */
    private ScanResult apply() {
        initialized = true;
        Map<ConfigKey, Config> wanted = new LinkedHashMap<>();
        Map<ConfigKey, Path> newOwners = new HashMap<>();
        List<DocumentError> errs = new ArrayList<>(pathErrors);
        List<DocumentError> warns = new ArrayList<>();
        for (Map.Entry<Path, FileState> e : new TreeMap<>(files).entrySet()) {
            String source = root.relativize(e.getKey()).toString();
            errs.addAll(e.getValue().errors());
            warns.addAll(e.getValue().warnings());
            for (Config c : e.getValue().configs()) {
                Path owner = newOwners.putIfAbsent(c.key(), e.getKey());
                if (owner == null) {
                    wanted.put(c.key(), c);
                } else {
                    errs.add(new DocumentError(source, 0, 0, c.gvk().kind(), c.namespace(), c.name(), "",
                            "also defined in " + root.relativize(owner) + ", which takes precedence"));
                }
            }
        }
        // errors first: whoever sees an object's event also sees the errors of the same scan
        errors = List.copyOf(errs);
        warnings = List.copyOf(warns);
        Set<ConfigKey> changed = new HashSet<>();
        for (ConfigKey gone : new HashSet<>(owners.keySet())) {
            if (!wanted.containsKey(gone) && store.remove(gone)) {
                changed.add(gone);
            }
        }
        for (Config c : wanted.values()) {
            Optional<Config> before = store.get(c.gvk().kind(), c.namespace(), c.name());
            Config after = store.put(c);
            if (before.isEmpty() || before.get() != after) {
                changed.add(c.key());
            }
        }
        owners.clear();
        owners.putAll(newOwners);
        ScanResult result = new ScanResult(files.size(), wanted.size(), errs.size(), Set.copyOf(changed));
        scanListeners.forEach(l -> l.accept(result));
        return result;
    }

    /** Documents currently rejected, and paths of the tree that cannot be read, with reasons. */
    public List<DocumentError> errors() {
        return errors;
    }

    /** Warnings about documents that loaded (fields left out, istiod's validation warnings). */
    public List<DocumentError> warnings() {
        return warnings;
    }

    /** The file (relative to the root) an object came from. */
    public synchronized Optional<String> sourceOf(ConfigKey key) {
        return Optional.ofNullable(owners.get(key)).map(p -> root.relativize(p).toString());
    }

    public void addScanListener(Consumer<ScanResult> l) {
        scanListeners.add(l);
    }

    public void removeScanListener(Consumer<ScanResult> l) {
        scanListeners.remove(l);
    }

    public Path root() {
        return root;
    }

    /** Loads the tree, then watches it (directories are registered as scans find them). */
    @Override
    public void run() {
        try {
            watch = FileSystems.getDefault().newWatchService();
        } catch (IOException e) {
            LOG.log(Level.WARNING, "cannot watch " + root + " (" + e.getMessage() + "); polling every " + POLL.toSeconds() + "s");
        }
        ScanResult first = scan();
        LOG.log(Level.INFO, "config dir loaded dir=" + root + " files=" + first.files() + " configs=" + first.configs()
                + " rejected=" + first.errors() + " warnings=" + warnings.size());
        store.run();
        synced.complete(null);
        watcher = Thread.ofPlatform().daemon().name("config-dir-watcher").start(this::loop);
    }

    private void loop() {
        while (!closed) {
            try {
                WatchKey key = watch == null ? null : watch.poll(POLL.toMillis(), TimeUnit.MILLISECONDS);
                if (watch == null) {
                    Thread.sleep(POLL.toMillis());
                }
                if (key != null) {
                    settle(key);
                }
                long t0 = System.nanoTime();
                ScanResult r = scan();
                if (!r.changed().isEmpty()) {
                    LOG.log(Level.INFO, "config dir changed dir=" + root + " changed=" + r.changed().size() + " configs="
                            + r.configs() + " rejected=" + r.errors() + " in "
                            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0) + " ms");
                }
            } catch (InterruptedException | ClosedWatchServiceException e) {
                return;
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "config dir watch: " + e.getMessage(), e);
            }
        }
    }

    /**
     * Waits until the burst of changes that {@code first} opened is over. The quick path
     * ({@link #SETTLE}, enough to collect a rename's own events) is for bursts that only put
     * whole config files into place: an atomic replace (a hidden temp file renamed over the
     * old one, as Kubernetes volume updates and careful tools do) shows as the config file
     * created and hidden files changing. Anything else waits for {@link #DEBOUNCE} without
     * events: a config file written in place (it may be read half-written), one deleted (it may
     * be about to be written again: an editor's save, {@code rm} then {@code cp}), and a new
     * directory or other name (a copy of a tree whose files are still being written).
     */
    private void settle(WatchKey first) throws InterruptedException {
        boolean inPlace = drain(first);
        WatchKey more;
        while ((more = watch.poll((inPlace ? DEBOUNCE : SETTLE).toMillis(), TimeUnit.MILLISECONDS)) != null) {
            inPlace |= drain(more);
        }
    }

    /** Takes a key's events; whether any needs the long wait (see {@link #settle}), or events were lost. */
    private static boolean drain(WatchKey key) {
        boolean inPlace = false;
        for (WatchEvent<?> e : key.pollEvents()) {
            if (!(e.context() instanceof Path name) || e.kind() == StandardWatchEventKinds.OVERFLOW) {
                inPlace = true;
            } else if (isConfigFile(name)) {
                inPlace |= e.kind() != StandardWatchEventKinds.ENTRY_CREATE;
            } else {
                // hidden names (temp files, Kubernetes' ..data) are not read; a directory or
                // other new name may be a tree still being copied
                inPlace |= !name.getFileName().toString().startsWith(".") && e.kind() == StandardWatchEventKinds.ENTRY_CREATE;
            }
        }
        key.reset();
        return inPlace;
    }


    @Override
    public CompletableFuture<Void> synced() {
        return synced;
    }

    @Override
    public void close() {
        closed = true;
        if (watch != null) {
            try {
                watch.close();
            } catch (IOException e) {
                // nothing left to release
            }
        }
        if (watcher != null) {
            watcher.interrupt();
        }
        store.close();
    }
}
