package io.meshpilot.mesh;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.System.Logger.Level;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Watches a few files for changes and calls back with the ones that changed, debounced so an
 * editor's or Kubernetes' multi-step write (temp file, rename, {@code ..data} symlink swap)
 * becomes one callback. Watches each file's directory, because the file itself may be
 * replaced rather than written. Also polls, so a directory created after start or a missed
 * event is still noticed. One daemon thread; {@link #close()} ends it.
 *
 * <p>{@link #directory} watches every file directly inside one directory instead (files
 * added, changed or removed; hidden files ignored), for directories of credentials.
 */
public final class FileWatcher implements AutoCloseable {
    private static final System.Logger LOG = System.getLogger(FileWatcher.class.getName());

    private final List<Path> files;
    /** Directories whose direct children are watched (empty for a fixed file list). */
    private final List<Path> directories;
    private final Duration debounce;
    private final Duration poll;
    private final Consumer<Set<Path>> onChange;
    private final WatchService service;
    private final Thread thread;
    private final Snapshot initial;
    private volatile boolean closed;

    public FileWatcher(String name, List<Path> files, Duration debounce, Duration poll, Consumer<Set<Path>> onChange)
            throws IOException {
        this(name, files, List.of(), debounce, poll, onChange);
    }

    /**
     * Watches the files directly inside {@code dir} (not below it; hidden files ignored): calls
     * back with the files added, changed or removed. A directory that does not exist yet is
     * polled for.
     */
    public static FileWatcher directory(String name, Path dir, Duration debounce, Duration poll,
                                        Consumer<Set<Path>> onChange) throws IOException {
        return new FileWatcher(name, List.of(), List.of(dir), debounce, poll, onChange);
    }

    private FileWatcher(String name, List<Path> files, List<Path> directories, Duration debounce, Duration poll,
                        Consumer<Set<Path>> onChange) throws IOException {
        this.files = files.stream().map(p -> p.toAbsolutePath().normalize()).toList();
        this.directories = directories.stream().map(p -> p.toAbsolutePath().normalize()).toList();
        this.debounce = debounce;
        this.poll = poll;
        this.onChange = onChange;
        this.service = FileSystems.getDefault().newWatchService();
        registerDirectories();
        // taken before the constructor returns: a change right after it is a change
        this.initial = Snapshot.of(watchedFiles());
        this.thread = Thread.ofPlatform().daemon().name("file-watcher-" + name).unstarted(this::loop);
        thread.start();
    }

    private final Set<Path> registered = new HashSet<>();

    private void registerDirectories() {
        List<Path> watched = new ArrayList<>();
        files.forEach(f -> watched.add(f.getParent()));
        watched.addAll(directories);
        for (Path dir : watched) {
            if (dir != null && !registered.contains(dir) && Files.isDirectory(dir)) {
                try {
                    dir.register(service, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_MODIFY,
                            StandardWatchEventKinds.ENTRY_DELETE);
                    registered.add(dir);
                } catch (IOException e) {
                    LOG.log(Level.WARNING, "cannot watch " + dir + ": " + e.getMessage() + " (polling instead)");
                }
            }
        }
    }

    private void loop() {
        Snapshot last = initial;
        while (!closed) {
            try {
                WatchKey key = service.poll(poll.toMillis(), TimeUnit.MILLISECONDS);
                if (key != null) {
                    key.pollEvents();
                    key.reset();
                    // Debounce: keep draining events until the directory is quiet.
                    WatchKey more;
                    while ((more = service.poll(debounce.toMillis(), TimeUnit.MILLISECONDS)) != null) {
                        more.pollEvents();
                        more.reset();
                    }
                }
                registerDirectories();
                Snapshot now = Snapshot.of(watchedFiles());
                Set<Path> changed = now.changedSince(last);
                last = now;
                if (!changed.isEmpty()) {
                    try {
                        onChange.accept(changed);
                    } catch (RuntimeException e) {
                        LOG.log(Level.ERROR, "file change handler failed for " + changed, e);
                    }
                }
            } catch (InterruptedException | ClosedWatchServiceException e) {
                return;
            }
        }
    }

    /** The fixed files plus what the watched directories hold now. */
    private List<Path> watchedFiles() {
        if (directories.isEmpty()) {
            return files;
        }
        List<Path> all = new ArrayList<>(files);
        for (Path dir : directories) {
            try (var list = Files.list(dir)) {
                list.filter(p -> !p.getFileName().toString().startsWith(".")).filter(Files::isRegularFile)
                        .forEach(all::add);
            } catch (IOException | UncheckedIOException e) {
                // absent or unreadable now: its files count as gone
            }
        }
        return all;
    }

    @Override
    public void close() {
        closed = true;
        try {
            service.close();
        } catch (IOException e) {
            // closing a watch service does not fail in practice; nothing to recover
        }
        thread.interrupt();
    }

    /** Content fingerprints of the watched files (absent = null). */
    private record Snapshot(Map<Path, String> hashes) {
        static Snapshot of(List<Path> files) {
            var m = new HashMap<Path, String>();
            for (Path f : files) {
                m.put(f, hash(f));
            }
            return new Snapshot(m);
        }

        Set<Path> changedSince(Snapshot before) {
            Set<Path> out = new HashSet<>();
            hashes.forEach((p, h) -> {
                if (!Objects.equals(h, before.hashes.get(p))) {
                    out.add(p);
                }
            });
            before.hashes.forEach((p, h) -> {
                if (h != null && !hashes.containsKey(p)) {
                    out.add(p); // a directory's file that is gone
                }
            });
            return out;
        }

        /** Above this size a file's fingerprint is its size and modification time: a poll never reads it whole. */
        static final long MAX_HASHED = 1024 * 1024;

        private static String hash(Path f) {
            try {
                long size = Files.size(f);
                if (size > MAX_HASHED) {
                    return "size:" + size + ",mtime:" + Files.getLastModifiedTime(f).toMillis();
                }
                byte[] bytes = Files.readAllBytes(f);
                var md = MessageDigest.getInstance("SHA-256");
                return HexFormat.of().formatHex(md.digest(bytes));
            } catch (IOException e) {
                return null;
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
