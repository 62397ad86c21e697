package io.meshpilot.config.file;

import java.io.IOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileSystemException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.NotDirectoryException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * One listing of a config directory tree: the config files in it, the directories listed, and
 * every path that could not be taken, with the cause (a directory that cannot be read, a
 * symlink loop, a dangling symlink, a FIFO named like a config file). Hidden names are not
 * entered; symlinks to files are followed, symlinks to directories are not (as istiod's
 * file walk). Never throws: what fails is a {@link Problem}, the rest is listed.
 */
final class ConfigTree {
    /** A path that is not listed, and why. */
    record Problem(Path path, String reason) {
    }

    /**
     * {@code files}: config files by path (sorted); {@code directories}: the directories
     * listed; {@code unlisted}: directories that could not be read (what was below them is
     * unknown, not gone); {@code rootMissing}: the root does not exist.
     */
    record Listing(Map<Path, BasicFileAttributes> files, Set<Path> directories, Set<Path> unlisted,
                   List<Problem> problems, boolean rootMissing) {
        /** Whether {@code file} is below a directory that could not be read (so it may still be there). */
        boolean hidesFile(Path file) {
            for (Path d : unlisted) {
                if (file.startsWith(d)) {
                    return true;
                }
            }
            return false;
        }
    }

    private final Map<Path, BasicFileAttributes> files = new TreeMap<>();
    private final Set<Path> directories = new LinkedHashSet<>();
    private final Set<Path> unlisted = new LinkedHashSet<>();
    private final List<Problem> problems = new ArrayList<>();

    private ConfigTree() {
    }

    static Listing list(Path root) {
        ConfigTree tree = new ConfigTree();
        boolean missing = false;
        try {
            BasicFileAttributes a = Files.readAttributes(root, BasicFileAttributes.class);
            if (a.isDirectory()) {
                tree.directory(root);
            } else {
                tree.unreadable(root, "not a directory");
            }
        } catch (NoSuchFileException e) {
            missing = true;
        } catch (IOException e) {
            tree.unreadable(root, reason(e));
        }
        return new Listing(tree.files, tree.directories, tree.unlisted, tree.problems, missing);
    }

    private void unreadable(Path dir, String reason) {
        unlisted.add(dir);
        problems.add(new Problem(dir, "cannot read directory: " + reason));
    }

    private void directory(Path dir) {
        List<Path> entries = new ArrayList<>();
        try (DirectoryStream<Path> stream = Files.newDirectoryStream(dir)) {
            for (Path p : stream) {
                entries.add(p);
            }
        } catch (DirectoryIteratorException e) {
            // failed partway: the entries read so far are not the directory's contents, so none
            // is used; the directory counts as unread and its files keep their last objects
            unreadable(dir, reason(e.getCause()));
            return;
        } catch (IOException e) {
            unreadable(dir, reason(e));
            return;
        }
        directories.add(dir);
        for (Path p : entries) {
            entry(p);
        }
    }

    private void entry(Path p) {
        if (p.getFileName().toString().startsWith(".")) {
            return; // hidden: editors' temp files, Kubernetes' ..data
        }
        boolean config = FileConfigSource.isConfigFile(p);
        BasicFileAttributes a;
        try {
            a = Files.readAttributes(p, BasicFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (NoSuchFileException e) {
            return; // removed while listing
        } catch (IOException e) {
            problems.add(new Problem(p, reason(e)));
            return;
        }
        if (a.isSymbolicLink()) {
            try {
                a = Files.readAttributes(p, BasicFileAttributes.class);
            } catch (NoSuchFileException e) {
                if (config) {
                    problems.add(new Problem(p, "dangling symlink -> " + linkTarget(p)));
                }
                return;
            } catch (IOException e) {
                if (config) {
                    problems.add(new Problem(p, reason(e)));
                }
                return;
            }
            if (a.isDirectory()) {
                return; // not followed: a link back up would make the tree endless
            }
        }
        if (a.isDirectory()) {
            directory(p);
        } else if (config && a.isRegularFile()) {
            files.put(p, a);
        } else if (config) {
            problems.add(new Problem(p, "not a regular file (" + fileType(p) + ")"));
        }
    }

    private static String linkTarget(Path link) {
        try {
            return Files.readSymbolicLink(link).toString();
        } catch (IOException e) {
            return "?";
        }
    }

    /** What a non-regular file is, from its mode bits (S_IFMT). */
    private static String fileType(Path p) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode");
            return switch (mode & 0170000) {
                case 0010000 -> "FIFO";
                case 0140000 -> "socket";
                case 0020000 -> "character device";
                case 0060000 -> "block device";
                default -> "mode " + Integer.toOctalString(mode);
            };
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return "not a file or directory";
        }
    }

    /** The cause of a failed file operation in a few words ("permission denied", "symlink loop"). */
    static String reason(IOException e) {
        if (e instanceof AccessDeniedException) {
            return "permission denied";
        }
        if (e instanceof NoSuchFileException) {
            return "does not exist";
        }
        if (e instanceof NotDirectoryException) {
            return "not a directory";
        }
        if (e instanceof FileSystemException fs && fs.getReason() != null) {
            String r = fs.getReason();
            return r.contains("Too many levels of symbolic links") ? "symlink loop" : r.toLowerCase(Locale.ROOT);
        }
        return e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    }
}
