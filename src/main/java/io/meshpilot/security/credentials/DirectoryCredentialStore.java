package io.meshpilot.security.credentials;

import io.meshpilot.config.file.FileConfigSource;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.mesh.FileWatcher;
import io.meshpilot.config.ConfigKey;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * Credentials from Kubernetes Secret manifests in one directory ({@code --credentialsDir}):
 * every {@code .yaml}, {@code .yml} and {@code .json} file directly inside it (hidden files
 * ignored), watched. A missing directory holds no credentials. A Secret that does not validate
 * (bad base64, PEM that does not parse, a key that does not match its certificate, missing
 * keys) is logged with file and reason and keeps its last good version; a file that is not
 * YAML at all keeps all of its last good Secrets. When two files define the same Secret, the
 * file that sorts first owns it. Listeners hear which Secrets changed after each reload.
 */
public final class DirectoryCredentialStore implements CredentialStore, AutoCloseable {
    private static final System.Logger LOG = System.getLogger(DirectoryCredentialStore.class.getName());
    static final Duration DEBOUNCE = Duration.ofMillis(100);
    static final Duration POLL = Duration.ofSeconds(1);

    /** What one file held when last read (its credentials include kept last-good ones). */
    private record FileState(long size, FileTime modified, Object fileKey,
                             Map<String, Credential> credentials, List<SecretManifests.Problem> problems) {
        boolean sameFile(BasicFileAttributes a) {
            return size == a.size() && modified.equals(a.lastModifiedTime()) && Objects.equals(fileKey, a.fileKey());
        }
    }

    /** Outcome of one scan (tests wait on these). */
    public record ScanResult(int files, int credentials, List<SecretManifests.Problem> problems, Set<ConfigKey> changed) {
    }

    private final Path root;
    private final Map<Path, FileState> files = new HashMap<>();
    private final CredentialListeners listeners = new CredentialListeners();
    private final List<Consumer<ScanResult>> scanListeners = new CopyOnWriteArrayList<>();
    private volatile Map<String, Credential> byKey = Map.of();
    private volatile List<SecretManifests.Problem> problems = List.of();
    private volatile FileWatcher watcher;

    public DirectoryCredentialStore(Path root) {
        this.root = root.toAbsolutePath().normalize();
    }

    public Path root() {
        return root;
    }

    /** The same files as the config directory's: YAML or JSON, not hidden, no editor leftovers. */
    static boolean isManifest(Path p) {
        return FileConfigSource.isConfigFile(p);
    }

    /** Reads the directory now and applies what changed; listeners hear about it. Serialized. */
    public ScanResult scan() {
        return scan(Set.of());
    }

    /**
     * As {@link #scan()}, re-reading {@code changed} even when size, time and inode look the
     * same (a same-size rewrite within the file system's timestamp granularity).
     */
    synchronized ScanResult scan(Set<Path> changed) {
        Map<Path, BasicFileAttributes> present = new TreeMap<>();
        if (Files.isDirectory(root)) {
            try (Stream<Path> list = Files.list(root)) {
                list.filter(DirectoryCredentialStore::isManifest).forEach(p -> {
                    try {
                        BasicFileAttributes a = Files.readAttributes(p, BasicFileAttributes.class);
                        if (a.isRegularFile()) {
                            present.put(p, a);
                        }
                    } catch (IOException e) {
                        // vanished while listing: treated as deleted
                    }
                });
            } catch (IOException | UncheckedIOException e) {
                LOG.log(Level.WARNING, "cannot list credentials dir " + root + ": " + e.getMessage()
                        + "; keeping the credentials loaded before");
                return new ScanResult(files.size(), byKey.size(), problems, Set.of());
            }
        }
        files.keySet().removeIf(p -> !present.containsKey(p));
        for (Map.Entry<Path, BasicFileAttributes> e : present.entrySet()) {
            FileState old = files.get(e.getKey());
            if (old == null || !old.sameFile(e.getValue()) || changed.contains(e.getKey())) {
                files.put(e.getKey(), read(e.getKey(), e.getValue(), old));
            }
        }
        return apply();
    }

    private FileState read(Path path, BasicFileAttributes attrs, FileState old) {
        String file = root.relativize(path).toString();
        Map<String, Credential> previous = old == null ? Map.of() : old.credentials();
        String text;
        try {
            if (attrs.size() > SafeYaml.MAX_CHARS) {
                return keepAll(attrs, previous, file, "file is larger than " + SafeYaml.MAX_CHARS
                        + " bytes");
            }
            text = Files.readString(path, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), Map.of(), List.of());
        } catch (IOException e) {
            return keepAll(attrs, previous, file, "cannot read: " + e.getMessage());
        }
        SecretManifests.Parsed parsed;
        try {
            parsed = SecretManifests.parse(file, text);
        } catch (SecretManifests.UnreadableFile e) {
            return keepAll(attrs, previous, file, e.getMessage());
        }
        Map<String, Credential> now = new LinkedHashMap<>();
        for (Credential c : parsed.credentials()) {
            if (now.putIfAbsent(c.key(), c) != null) {
                LOG.log(Level.WARNING, "credential " + c.key() + " defined twice in " + file + "; the first one is used");
            }
        }
        for (SecretManifests.Problem p : parsed.problems()) {
            String key = p.name() == null ? null : p.namespace() + "/" + p.name();
            Credential kept = key == null ? null : previous.get(key);
            if (kept != null && !now.containsKey(key)) {
                now.put(key, kept);
            }
            LOG.log(Level.WARNING, "rejected credential " + p + (kept != null ? "; keeping its last good version" : ""));
        }
        for (String s : parsed.skipped()) {
            LOG.log(Level.INFO, "skipped non-Secret document in credentials file=" + file + " kind=" + s);
        }
        Instant t = Instant.now();
        for (Credential c : parsed.credentials()) {
            String problem = SecretManifests.validityProblem(c, t);
            if (problem != null) {
                LOG.log(Level.WARNING, "credential " + c.key() + " in " + file + ": " + problem + " (served anyway)");
            }
        }
        return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), Map.copyOf(now),
                parsed.problems());
    }

    private FileState keepAll(BasicFileAttributes attrs, Map<String, Credential> previous, String file, String reason) {
        LOG.log(Level.WARNING, "rejected credentials file " + file + ": " + reason
                + (previous.isEmpty() ? "" : "; keeping its last good " + previous.size() + " credential(s)"));
        return new FileState(attrs.size(), attrs.lastModifiedTime(), attrs.fileKey(), previous,
                List.of(new SecretManifests.Problem(file, 0, 0, null, null, reason)));
    }

    /** Recomputes the credentials from all files (the first file in name order owns a Secret). */
    private ScanResult apply() {
        Map<String, Credential> next = new TreeMap<>();
        Map<String, Path> owner = new HashMap<>();
        List<SecretManifests.Problem> errs = new ArrayList<>();
        for (Map.Entry<Path, FileState> e : new TreeMap<>(files).entrySet()) {
            errs.addAll(e.getValue().problems());
            for (Credential c : e.getValue().credentials().values()) {
                Path first = owner.putIfAbsent(c.key(), e.getKey());
                if (first == null) {
                    next.put(c.key(), c);
                } else {
                    String file = root.relativize(e.getKey()).toString();
                    String reason = "also defined in " + root.relativize(first) + ", which takes precedence";
                    errs.add(new SecretManifests.Problem(file, 0, 0, c.namespace(), c.name(), reason));
                    LOG.log(Level.WARNING, "credential " + c.key() + " in " + file + ": " + reason);
                }
            }
        }
        Map<String, Credential> before = byKey;
        Set<ConfigKey> changed = new HashSet<>();
        for (Map.Entry<String, Credential> e : before.entrySet()) {
            if (!next.containsKey(e.getKey())) {
                changed.add(CredentialStore.key(e.getValue().namespace(), e.getValue().name()));
            }
        }
        for (Map.Entry<String, Credential> e : next.entrySet()) {
            if (!e.getValue().sameContent(before.get(e.getKey()))) {
                changed.add(CredentialStore.key(e.getValue().namespace(), e.getValue().name()));
            }
        }
        byKey = Map.copyOf(next);
        problems = List.copyOf(errs);
        ScanResult result = new ScanResult(files.size(), next.size(), problems, Set.copyOf(changed));
        if (!changed.isEmpty()) {
            listeners.tell(result.changed());
        }
        scanListeners.forEach(l -> l.accept(result));
        return result;
    }

    /** Loads the directory, then watches it; reloads on every change. */
    public ScanResult start() throws IOException {
        ScanResult first = scan();
        watcher = FileWatcher.directory("credentials", root, DEBOUNCE, POLL, changed -> {
            ScanResult r = scan(changed);
            if (!r.changed().isEmpty()) {
                LOG.log(Level.INFO, "credentials reloaded dir=" + root + " changed=" + new TreeSet<>(r.changed())
                        + " credentials=" + r.credentials() + " rejected=" + r.problems().size());
            }
        });
        // what changed between the first scan and the watcher's first look is not lost
        ScanResult again = scan();
        return again.changed().isEmpty() ? first : again;
    }

    @Override
    public Optional<Credential> get(String namespace, String name) {
        return Optional.ofNullable(byKey.get(namespace + "/" + name));
    }

    @Override
    public Collection<Credential> all() {
        return byKey.values();
    }

    /** Documents and files currently rejected, with reasons. */
    public List<SecretManifests.Problem> problems() {
        return problems;
    }

    @Override
    public void addListener(Listener l) {
        listeners.add(l);
    }

    @Override
    public void removeListener(Listener l) {
        listeners.remove(l);
    }

    public void addScanListener(Consumer<ScanResult> l) {
        scanListeners.add(l);
    }

    public void removeScanListener(Consumer<ScanResult> l) {
        scanListeners.remove(l);
    }

    @Override
    public void close() {
        FileWatcher w = watcher;
        if (w != null) {
            w.close();
        }
    }
}
