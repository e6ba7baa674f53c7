package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.TestReplies;
import dev.rlmmcp.core.TestSettings;
import dev.rlmmcp.kernel.KernelFactory;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.store.SnapshotPrune;
import dev.rlmmcp.testsupport.UnixListener;
import java.net.ServerSocket;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Attempts to break out of the bwrap sandbox. Each must fail, the JVM must stay up, and the session
 * must answer the next call (or say that its kernel was restarted).
 */
class BwrapEscapeTest {

    @TempDir
    static Path dir;

    private static Sessions sessions;
    private static BwrapLauncher launcher;
    private Session session;

    @BeforeAll
    static void start() {
        Optional<BwrapLauncher> found =
                BwrapLauncher.detect(dir.resolve("spool"), Settings.DEFAULT_DISK_BYTES, SnapshotPrune::prune);
        assumeTrue(
                found.isPresent(),
                "bubblewrap is not installed or cannot create namespaces here: escape tests skipped");
        launcher = found.get();
        sessions =
                new Sessions(new KernelFactory(TestSettings.in(dir, 64L * 1024 * 1024), launcher, new ObjectMapper()));
    }

    @AfterAll
    static void stop() {
        if (sessions != null) {
            sessions.close();
        }
    }

    @AfterEach
    void stillUsable() {
        if (session != null) {
            assertThat(run("print(6 * 7)").path("stdout").asText()).isEqualTo("42\n");
        }
    }

    private ObjectNode run(String code) {
        if (session == null) {
            session = sessions.resolve(null, "escape-" + System.nanoTime());
        }
        return TestReplies.step(session.execute(StepRequest.of(code, Duration.ofSeconds(20))));
    }

    private String out(String code) {
        ObjectNode reply = run(code);
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("ok");
        return reply.path("stdout").asText();
    }

    private static String attempt(String body) {
        return "try:\n" + body.indent(4)
                + "    print('ESCAPED')\nexcept Exception as e:\n    print('blocked', type(e).__name__, e)\n";
    }

    @Test
    void runsAsNobodyWithoutCapabilities() {
        // 65534, or as root without a pids cgroup a uid of the kernel's own from --kernel-uids
        String[] ids = out("import os\nprint(os.getuid(), os.getgid())").strip().split(" ");
        assertThat(ids[0]).isEqualTo(ids[1]);
        assertThat(Long.parseLong(ids[0]))
                .satisfiesAnyOf(
                        uid -> assertThat(uid).isEqualTo(65534L),
                        uid -> assertThat(uid)
                                .isGreaterThanOrEqualTo((long) dev.rlmmcp.kernel.Capacity.DEFAULT_FIRST_KERNEL_UID));
        assertThat(out("print([l for l in open('/proc/self/status') if l.startswith('CapEff')][0].split()[1])"))
                .isEqualTo("0000000000000000\n");
    }

    @Test
    void noTcpToLoopbackOrOutside() throws Exception {
        try (ServerSocket listener = new ServerSocket(0)) {
            String code = "import socket\n"
                    + attempt("socket.create_connection(('127.0.0.1', " + listener.getLocalPort() + "), timeout=1)")
                    + attempt("socket.create_connection(('10.255.255.1', 80), timeout=1)");
            assertThat(out(code)).doesNotContain("ESCAPED").contains("blocked");
        }
    }

    @Test
    void noUnixSocketConnectToAServiceInTheDataRootOrInTmpButSocketpairsAndPipesWork() throws Exception {
        // the data root as users have it: one the kernel can read (JUnit makes it 0700)
        java.nio.file.Files.setPosixFilePermissions(
                dir, java.nio.file.attribute.PosixFilePermissions.fromString("rwxr-xr-x"));
        try (UnixListener deep = UnixListener.at(dir.resolve("data/acme/run/deep/service.sock"));
                UnixListener tmp = UnixListener.at(
                        Path.of("/tmp", "rlm-test-" + ProcessHandle.current().pid() + ".sock"))) {
            assertThat(out(UnixListener.kernelCode(deep.path(), tmp.path()))).isEqualTo(UnixListener.refusedOutput(2));
            ObjectNode raised = run("import socket\nsocket.socket(socket.AF_UNIX).connect('" + deep.path() + "')");
            assertThat(raised.path("error").path("type").asText()).isEqualTo("PermissionError");
            assertThat(raised.path("error").path("message").asText())
                    .contains("unix sockets are not available in the rlm-mcp sandbox");
            assertThat(deep.accepted() + tmp.accepted())
                    .as("connections the host services accepted")
                    .isZero();
        }
    }

    @Test
    void noIoUringWhoseSocketAndConnectOperationsNoFilterSees() {
        String code = """
                import ctypes
                libc = ctypes.CDLL(None, use_errno=True)
                params = ctypes.create_string_buffer(120)
                print(libc.syscall(425, 8, params), ctypes.get_errno())
                """;
        assertThat(out(code)).isEqualTo("-1 38\n"); // io_uring_setup: ENOSYS
    }

    @Test
    void noDns() {
        assertThat(out("import socket\n" + attempt("socket.getaddrinfo('example.com', 443)")))
                .startsWith("blocked");
    }

    @Test
    void cannotWriteOutsideTmpAndSpool() {
        String code = "import os\n"
                + attempt("open('/escape', 'w')")
                + attempt("open('/usr/escape', 'w')")
                + attempt("open('" + dir + "/escape', 'w')")
                + attempt("open(os.__file__, 'a')")
                + "open('/tmp/ok', 'w').write('x')\n"
                + "open(os.environ['RLM_SPOOL'] + '/ok', 'w').write('x')\nprint('wrote')";
        assertThat(out(code)).doesNotContain("ESCAPED").endsWith("wrote\n");
        assertThat(dir.resolve("escape")).doesNotExist();
    }

    @Test
    void cannotReadShadowTheServersFilesOrItsEnvironment() {
        Path project = Path.of("").toAbsolutePath();
        long server = ProcessHandle.current().pid();
        String code = attempt("open('/etc/shadow').read()")
                + attempt("open('/etc/passwd').read()")
                + attempt("import os; os.listdir('" + project + "')")
                + attempt("open('" + project.resolve("pom.xml") + "').read()")
                + attempt("open('/proc/" + server + "/environ').read()")
                + attempt("open('/proc/1/environ').read(); import os; assert os.listdir('/proc/1/root')");
        assertThat(out(code)).doesNotContain("ESCAPED");
    }

    @Test
    void seesNoneOfTheServersEnvironment() {
        String env = out("import os\nprint(sorted(os.environ))");
        assertThat(env).isEqualTo("['HOME', 'LANG', 'LC_ALL', 'PATH', 'PWD', 'RLM_SPOOL']\n");
        assertThat(placesShowing("JAVA_HOME")).isEqualTo("[]\n");
        assertThat(placesShowing("RLM_API_KEY")).isEqualTo("[]\n");
    }

    @Test
    void cannotFindTheServersApiKey() {
        String key = System.getenv("RLM_API_KEY");
        assumeTrue(key != null, "RLM_API_KEY is set for the tests by the pom");
        assertThat(placesShowing(key)).isEqualTo("[]\n");
    }

    /** Where {@code needle} shows up for the kernel: its environment, and every environ or cmdline file it can read in /proc. */
    private String placesShowing(String needle) {
        return out("""
                import os, glob
                needle = %s
                hits = [k for k, v in os.environ.items() if needle in k or needle in v]
                for p in glob.glob('/proc/*/environ') + glob.glob('/proc/*/cmdline'):
                    try:
                        if needle.encode() in open(p, 'rb').read():
                            hits.append(p)
                    except OSError:
                        pass
                print(hits)
                """.formatted("'" + needle + "'"));
    }

    @Test
    void forkBombIsBounded() {
        ObjectNode reply = run("""
                import os, time
                children = 0
                try:
                    for _ in range(100000):
                        if os.fork() == 0:
                            time.sleep(3)
                            os._exit(0)
                        children += 1
                except OSError as e:
                    print('stopped after', children, type(e).__name__)
                """);
        assertThat(reply.path("stdout").asText()).as(reply.toString()).startsWith("stopped after");
        assertThat(ProcessHandle.current().isAlive()).isTrue();
    }

    @Test
    void memoryBombFailsWithMemoryErrorOrIsKilledByTheCgroup() {
        ObjectNode reply = run("""
                hog = []
                try:
                    while True:
                        hog.append(bytearray(64 * 1024 * 1024))
                except MemoryError:
                    print('stopped at', len(hog) * 64, 'MiB')
                del hog
                """);
        if (sessions.kernels().cgroupLimits() && reply.path("status").asText().equals("crashed")) {
            assertThat(reply.path("kernel_exit").asText()).as(reply.toString()).contains("SIGKILL");
        } else {
            assertThat(reply.path("stdout").asText()).as(reply.toString()).startsWith("stopped at");
        }
        assertThat(ProcessHandle.current().isAlive()).isTrue();
    }

    @Test
    void tmpIsSizeCapped() {
        String code = """
                import os
                written = 0
                try:
                    with open('/tmp/fill', 'wb') as f:
                        while written < 4 << 30:
                            f.write(b'\\0' * (1 << 20))
                            written += 1 << 20
                        f.flush()
                except OSError as e:
                    print('full after', written >> 20, 'MiB', e.errno)
                os.remove('/tmp/fill')
                """;
        assertThat(out(code)).startsWith("full after");
    }

    @Test
    void cannotSignalTheServerOrPtrace() {
        long server = ProcessHandle.current().pid();
        String code = "import os, signal, ctypes\n"
                + attempt("os.kill(" + server + ", signal.SIGKILL)")
                + attempt("os.kill(1, signal.SIGKILL)")
                + attempt("""
                        libc = ctypes.CDLL(None, use_errno=True)
                        if libc.ptrace(16, 1, 0, 0) != 0:
                            raise OSError(ctypes.get_errno(), 'ptrace refused')
                        """);
        assertThat(out(code)).doesNotContain("ESCAPED");
        assertThat(ProcessHandle.current().isAlive()).isTrue();
    }

    @Test
    void allowlistTricksReachOnlyTheSandbox() {
        String code = """
                os = print.__self__.__import__('os')
                print(os.system('cat /etc/shadow 2>/dev/null || echo no-shadow'))
                classes = ().__class__.__base__.__subclasses__()
                popen = [c for c in classes if c.__name__ == 'Popen'] or [None]
                print(os.popen('id -u').read().strip())
                """;
        String out = out(code);
        assertThat(out).contains("no-shadow", "65534").doesNotContain("root:");
    }

    @Test
    void interruptReachesThePythonProcess() {
        ObjectNode reply = TestReplies.step(
                session().execute(StepRequest.of("x = 1\nwhile True:\n    pass", Duration.ofMillis(300))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("interrupted");
        assertThat(out("print(x)")).isEqualTo("1\n");
    }

    @Test
    void killTakesTheWholeSandboxDown() throws Exception {
        out("import subprocess\nsubprocess.Popen(['sleep', '300'])");
        ObjectNode reply = TestReplies.step(session()
                .execute(StepRequest.of(
                        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass",
                        Duration.ofMillis(200))));
        assertThat(reply.path("status").asText()).as(reply.toString()).isEqualTo("killed");
        assertThat(ProcessHandle.allProcesses()
                        .filter(p -> p.info().commandLine().orElse("").equals("sleep 300")))
                .as("the sandbox's processes die with it")
                .isEmpty();
    }

    private Session session() {
        if (session == null) {
            session = sessions.resolve(null, "escape-" + System.nanoTime());
        }
        return session;
    }
}
