package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A cgroup of its own for each kernel, {@code rlm-kernel-<pid>} below the server's own group, with
 * memory (swap included) and pids limits: on v2 where the server's group delegates the memory
 * controller, on v1 in the memory and pids hierarchies. Where no hierarchy is writable, kernels run
 * without; a failure at one kernel's start is logged once and never fails the start.
 */
public final class CgroupLimits {

    private static final Logger log = LoggerFactory.getLogger(CgroupLimits.class);
    private static final AtomicBoolean warned = new AtomicBoolean();
    private static volatile Optional<Hierarchy> hierarchy;

    /** Where kernel groups go: one parent directory (v2) or one per v1 hierarchy; whether they limit pids. */
    record Hierarchy(boolean v2, List<Path> parents, boolean pids) {}

    private final Hierarchy where;
    private final long memoryBytes;
    private final int pids;

    private CgroupLimits(Hierarchy where, long memoryBytes, int pids) {
        this.where = where;
        this.memoryBytes = memoryBytes;
        this.pids = pids;
    }

    /** Limits for kernels started by this server, if the machine lets it make cgroups; memory 0 means none. */
    public static Optional<CgroupLimits> detect(long memoryBytes, int pids) {
        Optional<Hierarchy> found = hierarchy;
        if (found == null) {
            found = find(Path.of("/proc/self/mountinfo"), Path.of("/proc/self/cgroup"))
                    .filter(CgroupLimits::writable);
            found.ifPresent(CgroupLimits::removeStale);
            hierarchy = found;
        }
        return found.map(h -> new CgroupLimits(h, memoryBytes, pids));
    }

    /** True if each kernel's group also limits its processes (the pids controller is there). */
    public boolean limitsPids() {
        return where.pids();
    }

    /**
     * The memory the kernel started as {@code pid} holds, from its group: anonymous memory and shmem
     * (its /tmp), not page cache, which the kernel reclaims by itself; empty if it has no group.
     */
    public java.util.OptionalLong heldBytes(long pid) {
        Path stat = where.parents().get(0).resolve("rlm-kernel-" + pid).resolve("memory.stat");
        try {
            long held = 0;
            for (String line : Files.readAllLines(stat)) {
                String[] field = line.split(" ");
                if (field.length == 2
                        && (where.v2()
                                ? field[0].equals("anon") || field[0].equals("shmem")
                                : field[0].equals("total_rss") || field[0].equals("total_shmem"))) {
                    held += Long.parseLong(field[1]);
                }
            }
            return java.util.OptionalLong.of(held);
        } catch (IOException | RuntimeException e) {
            return java.util.OptionalLong.empty();
        }
    }

    /** The launcher with every process it starts moved into a limited group of its own. */
    public KernelLauncher around(KernelLauncher launcher) {
        return new DelegatingLauncher(launcher) {
            @Override
            public KernelHandle start(KernelSpec spec) throws IOException {
                KernelHandle kernel = inner.start(spec);
                apply(kernel.process());
                return kernel;
            }
        };
    }

    void apply(Process process) {
        List<Path> groups = where.parents().stream()
                .map(p -> p.resolve("rlm-kernel-" + process.pid()))
                .toList();
        try {
            for (Path group : groups) {
                Files.createDirectories(group);
            }
            process.onExit().thenRun(() -> {
                if (!removed(groups)) {
                    Thread.ofVirtual().start(() -> remove(groups));
                }
            });
            for (Path group : groups) {
                limit(group);
            }
            adopt(process.toHandle(), groups);
        } catch (IOException | RuntimeException e) {
            if (warned.compareAndSet(false, true)) {
                log.warn("kernel runs without cgroup limits: {}", e.toString());
            }
        }
    }

    private void limit(Path group) throws IOException {
        String memory = memoryBytes > 0 ? Long.toString(memoryBytes) : null;
        if (where.v2()) {
            set(group, "memory.max", memory);
            set(group, "memory.swap.max", memory == null ? null : "0");
        } else {
            set(group, "memory.limit_in_bytes", memory);
            set(group, "memory.memsw.limit_in_bytes", memory);
        }
        set(group, "pids.max", Integer.toString(pids));
    }

    private static void set(Path group, String file, String value) throws IOException {
        if (value != null && Files.exists(group.resolve(file))) {
            Files.writeString(group.resolve(file), value);
        }
    }

    /**
     * Moves the process and then its descendants until a pass finds none it has not moved: a child
     * forked before its parent moved stays behind, one forked after is born inside.
     */
    private static void adopt(ProcessHandle root, List<Path> groups) throws IOException {
        Set<Long> moved = new HashSet<>();
        Set<Long> pending = Set.of(root.pid());
        while (!pending.isEmpty()) {
            for (long pid : pending) {
                for (Path group : groups) {
                    try {
                        Files.writeString(group.resolve("cgroup.procs"), Long.toString(pid));
                    } catch (IOException e) {
                        if (ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false)) {
                            throw e;
                        }
                    }
                }
                moved.add(pid);
            }
            pending = new HashSet<>(children(root, moved));
            pending.removeAll(moved);
        }
    }

    /**
     * The children of {@code parents}, from each one's {@code /proc/<pid>/task/<tid>/children}, whose
     * cost grows with the kernel's processes; {@link ProcessHandle#descendants}, which reads every
     * process on the machine, where the kernel has no such files.
     */
    private static Set<Long> children(ProcessHandle root, Set<Long> parents) throws IOException {
        Set<Long> children = new HashSet<>();
        for (long parent : parents) {
            List<Path> threads;
            try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(parent), "task"))) {
                threads = tasks.toList();
            } catch (NoSuchFileException e) {
                continue; // ended: its children were moved already, or have left the tree
            }
            for (Path thread : threads) {
                Path list = thread.resolve("children");
                String pids;
                try {
                    pids = Files.readString(list);
                } catch (NoSuchFileException e) {
                    if (Files.isDirectory(thread)) {
                        return root.descendants().map(ProcessHandle::pid).collect(Collectors.toSet());
                    }
                    continue;
                }
                for (String pid : pids.trim().split(" +")) {
                    if (!pid.isEmpty()) {
                        children.add(Long.parseLong(pid));
                    }
                }
            }
        }
        return children;
    }

    /** Removes the groups once the kernel is gone, killing whatever it left behind in them. */
    private static void remove(List<Path> groups) {
        for (int attempt = 0; attempt < 100; attempt++) {
            if (removed(groups)) {
                return;
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                return;
            }
        }
        log.warn("could not remove cgroups {}", groups);
    }

    private static boolean removed(List<Path> groups) {
        boolean all = true;
        for (Path group : groups) {
            try {
                Files.deleteIfExists(group);
            } catch (IOException e) {
                all = false;
                killMembers(group);
            }
        }
        return all;
    }

    /** Groups of kernels that are gone, left when a server exited before it could remove them. */
    private static void removeStale(Hierarchy where) {
        for (Path parent : where.parents()) {
            try (var groups = Files.newDirectoryStream(parent, "rlm-kernel-*")) {
                for (Path group : groups) {
                    String pid = group.getFileName().toString().substring("rlm-kernel-".length());
                    if (pid.matches("\\d+")
                            && ProcessHandle.of(Long.parseLong(pid)).isEmpty()) {
                        Files.deleteIfExists(group);
                    }
                }
            } catch (IOException e) {
                log.debug("stale kernel cgroups in {} stay: {}", parent, e.toString());
            }
        }
    }

    private static void killMembers(Path group) {
        try {
            for (String pid : Files.readAllLines(group.resolve("cgroup.procs"))) {
                ProcessHandle.of(Long.parseLong(pid.trim())).ifPresent(ProcessHandle::destroyForcibly);
            }
        } catch (IOException | NumberFormatException e) {
            // gone meanwhile
        }
    }

    /** The server's own groups: on v2 if its group offers the memory controller, else v1's memory (and pids). */
    static Optional<Hierarchy> find(Path mountinfo, Path selfCgroup) {
        List<String[]> mounts = new ArrayList<>();
        List<String[]> memberships = new ArrayList<>();
        try {
            for (String line : Files.readAllLines(mountinfo)) {
                String[] halves = line.split(" - ", 2);
                String[] fields = halves[0].split(" ");
                String[] tail = halves.length > 1 ? halves[1].split(" ") : new String[0];
                if (fields.length > 4 && tail.length > 2 && tail[0].startsWith("cgroup")) {
                    mounts.add(new String[] {tail[0], fields[3], fields[4], tail[2]});
                }
            }
            for (String line : Files.readAllLines(selfCgroup)) {
                String[] fields = line.split(":", 3);
                if (fields.length == 3) {
                    memberships.add(fields);
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        for (String[] mount : mounts) {
            if (mount[0].equals("cgroup2")) {
                Optional<Path> own = own(mount, memberships, "");
                if (own.isPresent() && delegates(own.get())) {
                    return Optional.of(new Hierarchy(true, List.of(own.get()), enabled(own.get(), "pids")));
                }
            }
        }
        Optional<Path> memory = ownV1(mounts, memberships, "memory");
        if (memory.isEmpty()) {
            return Optional.empty();
        }
        List<Path> parents = new ArrayList<>(List.of(memory.get()));
        Optional<Path> pids = ownV1(mounts, memberships, "pids");
        pids.filter(p -> !p.equals(memory.get())).ifPresent(parents::add);
        return Optional.of(new Hierarchy(false, List.copyOf(parents), pids.isPresent()));
    }

    private static Optional<Path> ownV1(List<String[]> mounts, List<String[]> memberships, String controller) {
        return mounts.stream()
                .filter(m -> m[0].equals("cgroup") && List.of(m[3].split(",")).contains(controller))
                .findFirst()
                .flatMap(m -> own(m, memberships, controller));
    }

    /** Our group's directory in a mounted hierarchy: {type, mount root, mount point, options}. */
    private static Optional<Path> own(String[] mount, List<String[]> memberships, String controller) {
        return memberships.stream()
                .filter(m -> controller.isEmpty()
                        ? m[0].equals("0") && m[1].isEmpty()
                        : List.of(m[1].split(",")).contains(controller))
                .findFirst()
                .map(m -> {
                    String path = m[2];
                    if (!mount[1].equals("/") && path.startsWith(mount[1])) {
                        path = path.substring(mount[1].length());
                    }
                    return Path.of(mount[2], path.replaceFirst("^/+", ""));
                })
                .filter(Files::isDirectory);
    }

    /** True if children of this v2 group get the memory controller (enabling it and pids if need be). */
    private static boolean delegates(Path group) {
        try {
            List<String> available = List.of(
                    Files.readString(group.resolve("cgroup.controllers")).trim().split(" "));
            if (!available.contains("memory")) {
                return false;
            }
            List<String> enabled = List.of(Files.readString(group.resolve("cgroup.subtree_control"))
                    .trim()
                    .split(" "));
            for (String controller : List.of("memory", "pids")) {
                if (available.contains(controller) && !enabled.contains(controller)) {
                    Files.writeString(group.resolve("cgroup.subtree_control"), "+" + controller);
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean enabled(Path group, String controller) {
        try {
            return List.of(Files.readString(group.resolve("cgroup.subtree_control"))
                            .trim()
                            .split(" "))
                    .contains(controller);
        } catch (IOException e) {
            return false;
        }
    }

    private static boolean writable(Hierarchy where) {
        for (Path parent : where.parents()) {
            Path probe = parent.resolve("rlm-probe-" + ProcessHandle.current().pid());
            try {
                Files.createDirectories(probe);
                boolean procs = Files.isWritable(probe.resolve("cgroup.procs"));
                Files.delete(probe);
                if (!procs) {
                    return false;
                }
            } catch (IOException e) {
                log.info("no cgroup limits for kernels: cannot create groups in {} ({})", parent, e.toString());
                return false;
            }
        }
        return true;
    }
}
