package io.meshpilot.util;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Replaces a file so that a crash leaves either the old content or the new, never a torn
 * file: write a temporary file in the same directory, fsync it, rename it over the target,
 * fsync the directory so the rename itself is durable.
 */
public final class AtomicFiles {
    private AtomicFiles() {
    }

    /** Replaces {@code target} with {@code content} (ASCII); {@code ownerOnly}: mode 0600 where POSIX. */
    public static void write(Path target, String content, boolean ownerOnly) throws IOException {
        write(target, content.getBytes(StandardCharsets.US_ASCII), ownerOnly);
    }

    /** Replaces {@code target} with {@code content}; {@code ownerOnly}: mode 0600 where POSIX. */
    public static void write(Path target, byte[] content, boolean ownerOnly) throws IOException {
        Path dir = target.toAbsolutePath().getParent();
        Path tmp = dir.resolve("." + target.getFileName() + ".tmp");
        Files.deleteIfExists(tmp); // left by an earlier crash; never the live file
        Set<StandardOpenOption> options = EnumSet.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE);
        FileAttribute<?>[] attrs = ownerOnly && posix(dir)
                ? new FileAttribute<?>[] {PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"))}
                : new FileAttribute<?>[0];
        try {
            try (FileChannel ch = FileChannel.open(tmp, options, attrs)) {
                ByteBuffer buf = ByteBuffer.wrap(content);
                while (buf.hasRemaining()) {
                    ch.write(buf);
                }
                ch.force(true);
            }
            Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE);
        } finally {
            Files.deleteIfExists(tmp);
        }
        syncDirectory(dir);
    }

    /**
     * Makes creations, renames and deletions in {@code dir} durable.
     *
     * @throws IOException when the directory cannot be opened or synced (EIO, gone): the
     *     change may not survive a crash, so the caller must not report it as made
     */
    public static void syncDirectory(Path dir) throws IOException {
        try (FileChannel ch = FileChannel.open(dir, StandardOpenOption.READ)) {
            ch.force(true);
        } catch (UnsupportedOperationException e) {
            // a file system without directory channels: the rename is still atomic there
        }
    }

    /**
     * Creates {@code dir} and any missing parents, each made durable in its own parent, so a
     * crash cannot leave a file whose directory was never recorded.
     */
    public static void createDirectories(Path dir) throws IOException {
        Path absolute = dir.toAbsolutePath().normalize();
        if (Files.isDirectory(absolute)) {
            return;
        }
        Path parent = absolute.getParent();
        if (parent != null) {
            createDirectories(parent);
        }
        Files.createDirectories(absolute);
        if (parent != null) {
            syncDirectory(parent);
        }
    }

    public static boolean posix(Path dir) {
        return dir.getFileSystem().supportedFileAttributeViews().contains("posix");
    }
}
