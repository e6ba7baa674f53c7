package dev.rlmmcp.kernel.process;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

/**
 * bwrap arguments that show directories read-only at their host paths, whatever the modes of their
 * parents. A parent bwrap makes by itself to hold a bind is 0700 and owned by root when bwrap runs as
 * root, which a kernel dropped to uid 65534 cannot traverse; so every parent is made first, empty,
 * with {@code --perms 0755 --dir}. A directory inside another one shown is dropped (its parent's bind
 * shows it already, and a second bind would put mountpoints inside a read-only bind).
 */
final class ReadOnlyBinds {

    private ReadOnlyBinds() {}

    /** {@code covered}: directories the sandbox shows already (/usr and the like); dirs inside them are skipped. */
    static List<String> args(List<Path> dirs, List<String> covered) {
        List<Path> shown =
                Stream.concat(Stream.of("/usr"), covered.stream()).map(Path::of).toList();
        TreeSet<Path> wanted = new TreeSet<>();
        for (Path dir : dirs) {
            Path path = dir.toAbsolutePath().normalize();
            if (shown.stream().noneMatch(path::startsWith)) {
                wanted.add(path);
            }
        }
        List<String> args = new ArrayList<>();
        Set<Path> made = new HashSet<>();
        for (Path dir : wanted) {
            if (wanted.stream().anyMatch(other -> !other.equals(dir) && dir.startsWith(other))) {
                continue;
            }
            for (int i = 1; i < dir.getNameCount(); i++) {
                Path parent = dir.getRoot().resolve(dir.subpath(0, i));
                if (made.add(parent)) {
                    args.addAll(List.of("--perms", "0755", "--dir", parent.toString()));
                }
            }
            args.addAll(List.of("--ro-bind", dir.toString(), dir.toString()));
        }
        return args;
    }
}
