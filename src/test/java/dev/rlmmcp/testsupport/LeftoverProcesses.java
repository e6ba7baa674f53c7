package dev.rlmmcp.testsupport;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Fails a test class that leaves processes behind: after its last test, every process it started
 * (servers, kernels, bwrap, clients) must have ended. Registered for every class by JUnit's
 * extension auto-detection (src/test/resources/META-INF/services). What is found is a descendant of
 * this JVM that was not there before the class, or an orphan (its parent gone, so now a child of
 * pid 1) started during the class from this JVM's working directory, as an outer bwrap process is.
 * Each is given a few seconds to end (kernels stop asynchronously), then killed so that it leaks no
 * further, and the class fails naming them.
 */
public final class LeftoverProcesses implements BeforeAllCallback, AfterAllCallback {

    /** How long processes a class started may take to end after it. */
    static final Duration SETTLE = Duration.ofSeconds(15);

    private static final ExtensionContext.Namespace NS = ExtensionContext.Namespace.create(LeftoverProcesses.class);
    private static final String CWD =
            Path.of(System.getProperty("user.dir")).toAbsolutePath().toString();

    /** When this JVM started, as the kernel counts it (a process's start time is off the wall clock by up to a second). */
    private static final Instant JVM_START =
            ProcessHandle.current().info().startInstant().orElse(Instant.EPOCH);

    /** What ran before the class: this JVM's descendants and the orphans it may have left. */
    private record Before(Set<Long> running) {}

    @Override
    public void beforeAll(ExtensionContext context) {
        Set<Long> now = candidates().map(ProcessHandle::pid).collect(Collectors.toSet());
        context.getStore(NS).put(context.getRequiredTestClass(), new Before(now));
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        Before before = context.getStore(NS).remove(context.getRequiredTestClass(), Before.class);
        if (before == null) {
            return;
        }
        long deadline = System.nanoTime() + SETTLE.toNanos();
        List<ProcessHandle> left = leftover(before);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            left = leftover(before);
        }
        if (left.isEmpty()) {
            return;
        }
        List<String> described = left.stream().map(LeftoverProcesses::describe).toList();
        for (ProcessHandle p : left) {
            p.destroyForcibly();
        }
        throw new AssertionError(context.getRequiredTestClass().getSimpleName() + " left " + left.size()
                + " process(es) running " + SETTLE.toSeconds() + " s after its last test (now killed):\n  "
                + String.join("\n  ", described));
    }

    /** What the class started and is still running. */
    static List<ProcessHandle> leftover(Before before) {
        return candidates().filter(p -> !before.running().contains(p.pid())).toList();
    }

    /**
     * This JVM's running descendants, and the orphans it may have left: children of pid 1 started
     * since this JVM, in its working directory.
     */
    private static Stream<ProcessHandle> candidates() {
        Stream<ProcessHandle> orphans = ProcessHandle.allProcesses()
                .filter(p -> p.parent().map(ProcessHandle::pid).orElse(-1L) == 1L)
                .filter(p ->
                        p.info().startInstant().map(t -> !t.isBefore(JVM_START)).orElse(false))
                .filter(p -> CWD.equals(cwd(p.pid())));
        return Stream.concat(ProcessHandle.current().descendants(), orphans).filter(LeftoverProcesses::running);
    }

    /** Alive and not a zombie (one that has exited and waits only for its parent to reap it). */
    private static boolean running(ProcessHandle p) {
        return p.isAlive() && !"Z".equals(state(p.pid()));
    }

    private static String cwd(long pid) {
        try {
            return Files.readSymbolicLink(Path.of("/proc", Long.toString(pid), "cwd"))
                    .toString();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String state(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int end = stat.lastIndexOf(')');
            return end > 0 && end + 2 < stat.length() ? String.valueOf(stat.charAt(end + 2)) : "?";
        } catch (IOException | RuntimeException e) {
            return "?";
        }
    }

    static String describe(ProcessHandle p) {
        ProcessHandle.Info info = p.info();
        String cmd = info.commandLine().orElse(info.command().orElse("?"));
        if (cmd.length() > 300) {
            cmd = cmd.substring(0, 300) + "…";
        }
        return "pid " + p.pid() + " ppid " + p.parent().map(ProcessHandle::pid).orElse(-1L) + " state " + state(p.pid())
                + " children " + p.children().count() + ": " + cmd;
    }
}
