package dev.rlmmcp.kernel.process;

import dev.rlmmcp.base.FileTrees;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Spool directories that earlier versions made on disk under the runtime directory, one per kernel,
 * and left behind when their server was killed. Kernels now spool to a tmpfs of their own, so any
 * directory there is stale unless a sandbox still running (of an older server sharing the runtime
 * directory) binds it: its path is then on that bwrap's command line, or it changed in the last
 * minute (such a server makes the directory just before it starts bwrap). Removed as hostile trees.
 */
final class StaleSpools {

    private static final Logger log = LoggerFactory.getLogger(StaleSpools.class);
    private static final java.time.Duration RECENT = java.time.Duration.ofMinutes(1);

    private StaleSpools() {}

    static void remove(Path spoolRoot) {
        if (!Files.isDirectory(spoolRoot, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Set<String> inUse = boundBySandboxes();
        java.time.Instant recent = java.time.Instant.now().minus(RECENT);
        int removed = 0;
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(spoolRoot, "spool-*")) {
            for (Path dir : dirs) {
                if (!inUse.contains(dir.toString())
                        && Files.getLastModifiedTime(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)
                                .toInstant()
                                .isBefore(recent)) {
                    FileTrees.deleteTree(dir);
                    removed++;
                }
            }
        } catch (IOException e) {
            log.warn("stale spool directories in {} stay: {}", spoolRoot, e.toString());
        }
        if (removed > 0) {
            log.info("removed {} stale spool directories from {}", removed, spoolRoot);
        }
        try {
            Files.deleteIfExists(spoolRoot);
        } catch (IOException e) {
            // still in use by an older server, or holds something else: it stays
        }
    }

    /** Every argument of every running bwrap whose command line this user may read. */
    private static Set<String> boundBySandboxes() {
        Set<String> args = new HashSet<>();
        try (DirectoryStream<Path> procs = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path proc : procs) {
                try {
                    String[] argv =
                            new String(Files.readAllBytes(proc.resolve("cmdline")), StandardCharsets.UTF_8).split("\0");
                    if (argv.length > 0 && argv[0].endsWith("bwrap")) {
                        args.addAll(Set.of(argv));
                    }
                } catch (IOException | IllegalArgumentException e) {
                    // gone meanwhile, or not ours to read
                }
            }
        } catch (IOException e) {
            // no /proc: nothing known to be in use
        }
        return args;
    }
}
