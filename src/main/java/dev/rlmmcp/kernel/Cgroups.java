package dev.rlmmcp.kernel;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Which cgroup hierarchy this machine mounts; reported in /health (kernel.CgroupLimits sets the limits). */
final class Cgroups {

    private static volatile String version;

    private Cgroups() {}

    static String version() {
        String found = version;
        if (found == null) {
            found = detect(Path.of("/sys/fs/cgroup"), Path.of("/proc/self/mounts"));
            version = found;
        }
        return found;
    }

    static String detect(Path root, Path mounts) {
        if (Files.isRegularFile(root.resolve("cgroup.controllers"))) {
            return "v2";
        }
        try {
            return Files.readAllLines(mounts).stream()
                            .anyMatch(line -> line.split(" ").length > 2 && line.split(" ")[2].equals("cgroup"))
                    ? "v1"
                    : "none";
        } catch (IOException e) {
            return "none";
        }
    }
}
