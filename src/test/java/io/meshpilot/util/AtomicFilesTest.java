package io.meshpilot.util;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Durable replacement of files on a real file system. */
class AtomicFilesTest {
    /**
     * A directory sync that fails is the caller's failure: the rename or delete it was to make
     * durable may not survive a crash, so it must not be acknowledged. (A missing directory
     * stands in for EIO, which a test cannot provoke.)
     */
    @Test
    void aDirectorySyncThatFailsIsReported(@TempDir Path dir) {
        assertThrows(IOException.class, () -> AtomicFiles.syncDirectory(dir.resolve("gone")));
    }

    @Test
    void aWriteReplacesTheFileAndLeavesNoTemporaryFile(@TempDir Path dir) throws IOException {
        Path target = dir.resolve("a.json");
        AtomicFiles.write(target, "one", false);
        AtomicFiles.write(target, "two", true);
        assertEquals("two", Files.readString(target));
        try (var files = Files.list(dir)) {
            assertEquals(1, files.count());
        }
    }

    @Test
    void createDirectoriesMakesEveryMissingLevel(@TempDir Path dir) throws IOException {
        Path deep = dir.resolve("a/b/c");
        AtomicFiles.createDirectories(deep);
        assertTrue(Files.isDirectory(deep));
        AtomicFiles.createDirectories(deep); // already there: nothing to do
        Files.writeString(dir.resolve("file"), "x");
        assertThrows(IOException.class, () -> AtomicFiles.createDirectories(dir.resolve("file/sub")));
    }
}
