package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The life of one kernel's OS process: started by a launcher, signalled (interrupt, kill) through
 * the {@link KernelHandle} the launcher gave it, watched for a stop (SIGSTOP), and, once it has
 * ended, how it ended and its last words on stderr. Its
 * stderr is relayed to the log by a small platform thread of its own ({@link StderrRelay}). The
 * messages on its pipes are the channel's business, not this class's.
 */
public final class KernelProcess {

    private static final Logger log = LoggerFactory.getLogger(KernelProcess.class);

    private final KernelHandle kernel;
    private final Process process;
    private final StderrRelay stderr;
    private final Thread diagnostics;
    private volatile boolean killedByUs;
    /** Whose kernel this is, in the log: its session, or "warm-N" until one claims it. */
    private volatile String label;
    /** The harness's pid in its own namespace (from its ready frame; -1: unknown), and in the host's once found (0: not yet). */
    private volatile long announcedPid = -1;

    private volatile long hostPid;

    private KernelProcess(KernelHandle kernel, String label) {
        this.kernel = kernel;
        this.process = kernel.process();
        this.label = label;
        this.stderr = new StderrRelay(line -> log.warn("kernel {}: {}", this.label, line), System::nanoTime);
        this.diagnostics = Thread.ofPlatform()
                .daemon()
                .stackSize(256 * 1024)
                .name("kernel-log-" + label)
                .start(this::relayDiagnostics);
    }

    public static KernelProcess start(KernelLauncher launcher, KernelSpec spec, String label) throws IOException {
        return new KernelProcess(launcher.start(spec), label);
    }

    /**
     * The kernel is {@code label}'s from now on, its writable directory at {@code writableDir} (null:
     * none): the launcher makes that directory the kernel's.
     */
    public void claim(String label, Path writableDir) throws IOException {
        this.label = label;
        diagnostics.setName("kernel-log-" + label);
        if (writableDir != null) {
            kernel.attach(writableDir);
        }
    }

    public InputStream stdout() {
        return process.getInputStream();
    }

    public OutputStream stdin() {
        return process.getOutputStream();
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** The pid the harness gave for itself, in its own pid namespace. */
    public void announced(long pid) {
        announcedPid = pid;
    }

    /** SIGINT: the running code stops with its variables intact. */
    public void interrupt() {
        kernel.interrupt();
    }

    /** Kills the process on purpose (a time limit, a protocol violation, a stop). */
    public void kill() {
        killedByUs = true;
        kernel.kill();
    }

    public boolean killedByUs() {
        return killedByUs;
    }

    public boolean waitFor(Duration wait) throws InterruptedException {
        return process.waitFor(wait.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** How the process ended (killed first if it has not): "exit status 1", "killed by SIGKILL, …". */
    public String end() {
        kernel.kill();
        try {
            process.waitFor(5, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        String why = kernel.whyEnded();
        String exit = process.isAlive() ? "still running" : why != null ? why : describeExit(process.exitValue());
        try {
            diagnostics.join(Duration.ofSeconds(1));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        return exit;
    }

    /** The last lines the process wrote on stderr (a Python traceback, a fatal error). */
    public String lastWords() {
        return stderr.lastWords();
    }

    static String describeExit(int status) {
        if (status > 128 && status < 160) {
            int signal = status - 128;
            String name = switch (signal) {
                case 6 -> "SIGABRT";
                case 9 -> "SIGKILL, e.g. the out-of-memory killer";
                case 11 -> "SIGSEGV, a segmentation fault";
                case 15 -> "SIGTERM";
                default -> "signal " + signal;
            };
            return "killed by " + name;
        }
        return "exit status " + status;
    }

    private void relayDiagnostics() {
        try {
            stderr.relay(process.getErrorStream());
        } catch (IOException e) {
            log.debug("kernel {} stderr closed: {}", process.pid(), e.toString());
        }
    }

    /** Whether the harness's process is stopped (SIGSTOP, a tracer): it can never answer until continued. */
    public boolean stopped() {
        long pid = hostPid;
        if (pid == 0) {
            hostPid = pid = findHarness();
        }
        if (pid < 0) {
            return false;
        }
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            int end = stat.lastIndexOf(')');
            char state = end > 0 && end + 2 < stat.length() ? stat.charAt(end + 2) : '?';
            return state == 'T' || state == 't';
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The host pid of the harness: the process of this kernel's tree whose pid in its own namespace
     * (the last of /proc/PID/status's NSpid) is the one it announced; -1 if none is (a container's).
     */
    private long findHarness() {
        long announced = announcedPid;
        if (announced < 0) {
            return -1;
        }
        return Stream.concat(Stream.of(process.toHandle()), process.toHandle().descendants())
                .mapToLong(ProcessHandle::pid)
                .filter(pid -> namespacePid(pid) == announced)
                .findFirst()
                .orElse(-1);
    }

    private static long namespacePid(long pid) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("NSpid:")) {
                    String[] ids = line.substring(6).trim().split("\\s+");
                    return Long.parseLong(ids[ids.length - 1]);
                }
            }
        } catch (IOException | RuntimeException e) {
            // gone, or not ours to read
        }
        return -2;
    }
}
