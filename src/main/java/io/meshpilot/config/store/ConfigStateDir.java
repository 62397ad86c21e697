package io.meshpilot.config.store;

import com.google.gson.JsonElement;
import com.google.gson.JsonObject;
import com.google.gson.JsonParseException;
import com.google.gson.JsonParser;
import io.meshpilot.config.Config;
import io.meshpilot.config.ConfigJson;
import io.meshpilot.config.schema.ConfigParser;
import io.meshpilot.config.DocumentError;
import io.meshpilot.config.yaml.SafeYaml;
import io.meshpilot.config.ConfigKey;
import io.meshpilot.util.AtomicFiles;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;

/**
 * The writable store's objects on disk, one file per object:
 * {@code <dir>/<kind, lower case>/<namespace>/<name>.json} (a long name shortened by
 * {@link #fileSegment}), the object as the REST API returns it, with
 * its resourceVersion, generation and exact creation time. A write replaces its file
 * atomically and durably ({@link AtomicFiles}: temporary file, fsync, rename, fsync of the
 * directory) before the store acknowledges it, so a crash at any moment leaves each object
 * either as it was or as it was written; a delete removes the file and syncs the directory.
 * One file per object keeps a write's cost independent of how many objects there are, and a
 * damaged file costs only its own object.
 *
 * <p>The directory is locked while a server uses it: two servers writing one directory
 * would each overwrite the other's objects unseen.
 */
public final class ConfigStateDir implements ConfigPersistence, AutoCloseable {
    static final String SUFFIX = ".json";
    private static final String LOCK = ".lock";
    /** A namespace segment for cluster-scoped kinds; '_' is never left unescaped in a segment. */
    private static final String NO_NAMESPACE = "_cluster";
    /**
     * The most characters a state file may hold: it is read back through {@link ConfigParser},
     * which takes no more, so a bigger object is refused when written rather than lost at the
     * next restart.
     */
    static final int MAX_FILE_CHARS = SafeYaml.MAX_CHARS;
    /** UTF-8 takes at most 3 bytes per Java char, so a bigger file cannot be one we wrote. */
    private static final long MAX_FILE_BYTES = 3L * MAX_FILE_CHARS;

    /** Stems up to this length are the name itself: with ".", ".json" and ".tmp", 210 bytes. */
    static final int MAX_PLAIN_STEM = 200;
    /** Of a longer stem, this much is kept before '~' and the 64 hex digits of its hash. */
    private static final int HASHED_PREFIX = 120;

    private final Path root;
    private final FileChannel lockChannel;
    private final FileLock lock;

    private ConfigStateDir(Path root, FileChannel lockChannel, FileLock lock) {
        this.root = root;
        this.lockChannel = lockChannel;
        this.lock = lock;
    }

    /**
     * Creates {@code dir} if needed and locks it for this process.
     *
     * @throws IOException when it cannot be created or written, or another server holds it
     */
    public static ConfigStateDir open(Path dir) throws IOException {
        Path root = dir.toAbsolutePath().normalize();
        AtomicFiles.createDirectories(root);
        if (!Files.isWritable(root)) {
            throw new IOException(root + " is not writable");
        }
        FileChannel ch = FileChannel.open(root.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock lock;
        try {
            lock = ch.tryLock();
        } catch (OverlappingFileLockException e) {
            lock = null; // held by another server in this JVM
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        if (lock == null) {
            ch.close();
            throw new IOException(root + " is in use by another pilot-discovery (give each server its own "
                    + "--configStateDir)");
        }
        return new ConfigStateDir(root, ch, lock);
    }

    public Path root() {
        return root;
    }

    /** What the directory holds, and each file that could not be taken back, with why. */
    public record Loaded(List<Config> configs, List<DocumentError> errors) {
        public Loaded {
            configs = List.copyOf(configs);
            errors = List.copyOf(errors);
        }
    }

    /**
     * Reads every kept object. A file that cannot be read or parsed, or that holds another
     * object than its path names, is listed in {@link Loaded#errors()} and skipped; the
     * temporary file of a write that a crash interrupted is removed (that write was never
     * acknowledged).
     */
    public Loaded load(ConfigParser parser) {
        List<Config> configs = new ArrayList<>();
        List<DocumentError> errors = new ArrayList<>();
        for (Path kindDir : children(root, errors)) {
            if (!Files.isDirectory(kindDir, LinkOption.NOFOLLOW_LINKS)) {
                if (!kindDir.getFileName().toString().equals(LOCK)) {
                    errors.add(error(kindDir, "not a kind directory of the config state; ignored"));
                }
                continue;
            }
            for (Path nsDir : children(kindDir, errors)) {
                if (!Files.isDirectory(nsDir, LinkOption.NOFOLLOW_LINKS)) {
                    errors.add(error(nsDir, "not a namespace directory of the config state; ignored"));
                    continue;
                }
                for (Path file : children(nsDir, errors)) {
                    loadFile(parser, file, configs, errors);
                }
            }
        }
        return new Loaded(configs, errors);
    }

    private void loadFile(ConfigParser parser, Path file, List<Config> configs, List<DocumentError> errors) {
        String fileName = file.getFileName().toString();
        if (fileName.startsWith(".") && fileName.endsWith(".tmp")) {
            try {
                Files.deleteIfExists(file);
            } catch (IOException e) {
                errors.add(error(file, "cannot remove an interrupted write's temporary file: " + e.getMessage()));
            }
            return;
        }
        if (!fileName.endsWith(SUFFIX) || !Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            errors.add(error(file, "not a config state file (<name>.json); ignored"));
            return;
        }
        String text;
        try {
            if (Files.size(file) > MAX_FILE_BYTES) {
                errors.add(error(file, "larger than " + MAX_FILE_BYTES + " bytes; ignored"));
                return;
            }
            text = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(Files.readAllBytes(file))).toString();
        } catch (CharacterCodingException e) {
            errors.add(error(file, "not valid UTF-8; the object is skipped"));
            return;
        } catch (IOException e) {
            errors.add(error(file, "cannot read: " + e.getMessage()));
            return;
        }
        JsonObject json;
        try {
            JsonElement parsed = JsonParser.parseString(text);
            if (!parsed.isJsonObject()) {
                errors.add(error(file, "damaged: not a JSON object; the object is skipped"));
                return;
            }
            json = parsed.getAsJsonObject();
        } catch (JsonParseException e) {
            errors.add(error(file, "damaged: " + e.getMessage() + "; the object is skipped"));
            return;
        }
        ConfigParser.Result result = parser.parse(file.toString(), text);
        if (!result.errors().isEmpty()) {
            errors.addAll(result.errors());
            return;
        }
        if (result.configs().size() != 1) {
            errors.add(error(file, "holds " + result.configs().size() + " Istio objects, expected one; skipped"));
            return;
        }
        Config config = result.configs().getFirst();
        Path expected = fileOf(config.key());
        if (!expected.equals(file.toAbsolutePath().normalize())) {
            errors.add(error(file, "holds " + config.key() + ", which belongs in " + expected + "; skipped"));
            return;
        }
        try {
            configs.add(withSavedMeta(config, json));
        } catch (RuntimeException e) {
            errors.add(error(file, "damaged metadata: " + e.getMessage() + "; the object is skipped"));
        }
    }

    /** The metadata the parser leaves out (the store sets it): as it was when saved. */
    private static Config withSavedMeta(Config config, JsonObject json) {
        JsonObject meta = json.getAsJsonObject("metadata");
        String rv = meta.has("resourceVersion") ? meta.get("resourceVersion").getAsString() : "";
        long generation = meta.has("generation") ? meta.get("generation").getAsLong() : 1;
        Instant created;
        try {
            created = meta.has("creationTimestamp") ? Instant.parse(meta.get("creationTimestamp").getAsString())
                    : null;
        } catch (DateTimeParseException e) {
            throw new IllegalArgumentException("creationTimestamp: " + e.getMessage(), e);
        }
        return config.withMeta(rv, generation, created);
    }

    private static List<Path> children(Path dir, List<DocumentError> errors) {
        List<Path> out = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            entries.forEach(out::add);
        } catch (IOException | RuntimeException e) {
            errors.add(error(dir, "cannot list: " + e.getMessage() + "; the objects in it are skipped"));
        }
        out.sort(null);
        return out;
    }

    private static DocumentError error(Path where, String reason) {
        return new DocumentError(where.toString(), 0, 0, "", "", "", "", reason);
    }

    @Override
    public void saved(Config stored) {
        Path file = fileOf(stored.key());
        JsonObject json = ConfigJson.toJson(stored);
        if (stored.creationTimestamp() != null) {
            // exact, so a restart hands back the same object (the API shows whole seconds)
            json.getAsJsonObject("metadata").addProperty("creationTimestamp", stored.creationTimestamp().toString());
        }
        String text = json.toString();
        if (text.length() > MAX_FILE_CHARS) {
            throw new ConfigStoreException.TooLarge(stored.key(), "as stored (with its metadata and status) it is "
                    + text.length() + " characters of JSON, more than the " + MAX_FILE_CHARS
                    + " a config state file can hold and be loaded back; not saved");
        }
        try {
            AtomicFiles.createDirectories(file.getParent()); // the kind and namespace directories
            AtomicFiles.write(file, text.getBytes(StandardCharsets.UTF_8), true);
        } catch (IOException | RuntimeException e) {
            throw new ConfigStoreException.Unavailable(stored.key(), "not saved to " + file + ": " + e, e);
        }
    }

    @Override
    public void removed(ConfigKey key) {
        Path file = fileOf(key);
        try {
            if (Files.deleteIfExists(file)) {
                AtomicFiles.syncDirectory(file.getParent());
            }
        } catch (IOException e) {
            throw new ConfigStoreException.Unavailable(key, "not removed from " + file + ": " + e, e);
        }
    }

    Path fileOf(ConfigKey key) {
        String ns = key.namespace() == null || key.namespace().isEmpty() ? NO_NAMESPACE : segment(key.namespace());
        return root.resolve(segment(key.kind().toLowerCase(Locale.ROOT))).resolve(ns)
                .resolve(fileSegment(segment(key.name())) + SUFFIX);
    }

    /**
     * A file name stem that fits: file systems take 255 bytes per name, and a name may be 253
     * characters, more when percent-encoded, plus ".json" and the temporary file's "." and
     * ".tmp". A longer one keeps a readable prefix and adds the SHA-256 of the whole segment
     * after a '~', which {@link #segment} never leaves unescaped, so it cannot be another
     * object's plain name. The object's key is read from the file's content, not its name.
     */
    static String fileSegment(String segment) {
        if (segment.length() <= MAX_PLAIN_STEM) {
            return segment;
        }
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256")
                    .digest(segment.getBytes(StandardCharsets.US_ASCII));
            return segment.substring(0, HASHED_PREFIX) + "~" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is part of every Java platform", e);
        }
    }

    /**
     * A path segment for a Kubernetes name: names are DNS-1123 (lower case, digits, '-', '.')
     * and stay as they are; anything else (upper case for case-insensitive file systems, a
     * leading dot, separators) is percent-encoded, so no two keys share a file.
     */
    static String segment(String s) {
        StringBuilder b = new StringBuilder(s.length());
        byte[] bytes = s.getBytes(StandardCharsets.UTF_8);
        for (int i = 0; i < bytes.length; i++) {
            int c = bytes[i] & 0xff;
            boolean plain = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || (c == '.' && i > 0);
            if (plain) {
                b.append((char) c);
            } else {
                b.append('%').append(Character.toUpperCase(Character.forDigit(c >> 4, 16)))
                        .append(Character.toUpperCase(Character.forDigit(c & 0xf, 16)));
            }
        }
        return b.toString();
    }

    @Override
    public void close() {
        try {
            lock.release();
        } catch (IOException e) {
            // closing the channel releases it too
        }
        try {
            lockChannel.close();
        } catch (IOException e) {
            // nothing more to release
        }
    }
}
