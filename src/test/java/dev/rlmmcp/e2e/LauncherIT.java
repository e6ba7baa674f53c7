package dev.rlmmcp.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.e2e.support.McpDriver;
import dev.rlmmcp.e2e.support.ServerProcess;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * bin/rlm-mcp as an agent starts it: never a build, one line per problem, nothing on stderr but our
 * own lines. Runs on a copy of the launcher's layout (bin/, scripts/, a copy of the built jar, a
 * stand-in source tree, no Maven wrapper) in a temporary directory, so the real target/ is never
 * touched and any attempt to build would fail.
 */
class LauncherIT {

    /** A line the server logs (simplelogger: time, level, logger, message) or one the launcher prints. */
    private static final Pattern OUR_LINE = Pattern.compile(
            "(\\d{4}-\\d\\d-\\d\\dT[0-9:.]+[+-]\\d{4} (INFO|WARN|ERROR) [A-Za-z0-9]+ - .*|rlm-mcp: .*)");

    private static final String INITIALIZE = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
            + "\"protocolVersion\":\"2025-06-18\",\"capabilities\":{},\"clientInfo\":{\"name\":\"launcher-it\",\"version\":\"1\"}}}\n";

    private static Path root;
    private static Path source;

    @BeforeAll
    static void copyTheLayout() throws IOException {
        Path project = McpDriver.projectRoot();
        root = Files.createTempDirectory("rlm-launcher-it-");
        for (String dir : List.of("bin", "scripts")) {
            try (Stream<Path> files = Files.walk(project.resolve(dir))) {
                for (Path from : files.toList()) {
                    Path to = root.resolve(project.relativize(from).toString());
                    if (Files.isDirectory(from)) {
                        Files.createDirectories(to);
                    } else {
                        Files.copy(from, to, StandardCopyOption.COPY_ATTRIBUTES);
                    }
                }
            }
        }
        Files.createDirectories(root.resolve("target"));
        Files.copy(ServerProcess.jar(), root.resolve("target/rlm-mcp.jar"));
        source = root.resolve("src/main/java/Stand.java");
        Files.createDirectories(source.getParent());
        Files.writeString(source, "class Stand {}\n");
        Files.writeString(root.resolve("pom.xml"), "<project/>\n");
        sourcesOlderThanTheJar();
    }

    @AfterAll
    static void removeTheCopy() {
        ServerProcess.deleteTree(root);
    }

    /**
     * A fresh jar: everything under src/main and pom.xml a minute older than the jar's own time (not than
     * now, which a slow run of this class can carry past the jar's time).
     */
    private static void sourcesOlderThanTheJar() throws IOException {
        FileTime jar = Files.getLastModifiedTime(root.resolve("target/rlm-mcp.jar"));
        FileTime old = FileTime.from(jar.toInstant().minusSeconds(60));
        for (Path p : List.of(
                source,
                source.getParent(),
                source.getParent().getParent(),
                root.resolve("src/main"),
                root.resolve("pom.xml"))) {
            Files.setLastModifiedTime(p, old);
        }
    }

    record Run(int exit, List<String> stderr, String stdout, long millis) {}

    /** Runs bin/rlm-mcp (in `root`) with these arguments and stdin closed, RLM_JAVA_CACHE as given. */
    private static Run run(Path home, String cache, String... args) throws Exception {
        Process process = launcher(home, cache, args).start();
        process.getOutputStream().close();
        long start = System.nanoTime();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        String out = read(process.getInputStream());
        assertThat(process.waitFor(60, TimeUnit.SECONDS))
                .as("bin/rlm-mcp %s ended", Arrays.toString(args))
                .isTrue();
        long millis = (System.nanoTime() - start) / 1_000_000;
        return new Run(process.exitValue(), err.get().lines().toList(), out, millis);
    }

    private static ProcessBuilder launcher(Path home, String cache, String... args) {
        List<String> command =
                new ArrayList<>(List.of(home.resolve("bin/rlm-mcp").toString()));
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).directory(home.toFile());
        String java = ProcessHandle.current().info().command().orElseThrow();
        builder.environment()
                .put("JAVA_HOME", Path.of(java).getParent().getParent().toString());
        builder.environment().put("RLM_JAVA_CACHE", cache);
        builder.environment().remove("RLM_JAVA_OPTS");
        builder.environment().remove("RLM_API_KEY");
        return builder;
    }

    private static String read(java.io.InputStream in) {
        try {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** The command line of the JVM the last {@link #stdioStart} ran. */
    private static String lastJvm;

    /** Starts `bin/rlm-mcp stdio`, waits for the answer to initialize, then closes stdin: its stderr. */
    private static List<String> stdioStart(String cache) throws Exception {
        Process process = launcher(root, cache, "stdio", "--ephemeral", "--mcp-discovery", "false")
                .start();
        CompletableFuture<String> err = CompletableFuture.supplyAsync(() -> read(process.getErrorStream()));
        try (OutputStream in = process.getOutputStream();
                BufferedReader out =
                        new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            in.write(INITIALIZE.getBytes(StandardCharsets.UTF_8));
            in.flush();
            String answer = out.readLine();
            assertThat(answer).as("the answer to initialize; stderr so far").contains("\"serverInfo\"");
            // the launcher execs the JVM: same process
            lastJvm = Files.readString(Path.of("/proc", Long.toString(process.pid()), "cmdline"))
                    .replace('\0', ' ');
        }
        assertThat(process.waitFor(30, TimeUnit.SECONDS)).isTrue();
        return err.get().lines().toList();
    }

    @Test
    void aMissingJarStopsAtOnceWithOneLineNamingTheBuild() throws Exception {
        Path bare = Files.createTempDirectory("rlm-launcher-nojar-");
        try {
            for (String file : List.of("bin/rlm-mcp", "scripts/lib.sh")) {
                Files.createDirectories(bare.resolve(file).getParent());
                Files.copy(root.resolve(file), bare.resolve(file), StandardCopyOption.COPY_ATTRIBUTES);
            }
            Run run = run(bare, "auto", "stdio");
            assertThat(run.exit()).isEqualTo(2);
            assertThat(run.stderr()).hasSize(1);
            assertThat(run.stderr().get(0)).startsWith("rlm-mcp: ").contains("missing", "bin/rlm-mcp build");
            assertThat(run.stdout()).isEmpty();
            assertThat(run.millis()).as("no build, no JVM").isLessThan(2000);
        } finally {
            ServerProcess.deleteTree(bare);
        }
    }

    @Test
    void aStaleJarStartsAsItIsAndSaysSoInOneLine() throws Exception {
        try {
            Files.writeString(source, "class Stand { int changed; }\n"); // newer than the jar now
            List<String> stderr = stdioStart("off");
            List<String> launcher =
                    stderr.stream().filter(l -> l.startsWith("rlm-mcp: ")).toList();
            assertThat(launcher).as(String.join("\n", stderr)).hasSize(1);
            assertThat(launcher.get(0)).contains("sources are newer", "bin/rlm-mcp build");
            assertThat(stderr).allMatch(l -> OUR_LINE.matcher(l).matches(), "only our own lines");
        } finally {
            sourcesOlderThanTheJar();
        }
    }

    @Test
    void aNormalStartPrintsOnlyOurOwnLinesAndMakesItsStartUpCacheInTheBackground() throws Exception {
        List<String> first = stdioStart("auto");
        assertThat(first)
                .as(String.join("\n", first))
                .allMatch(l -> OUR_LINE.matcher(l).matches(), "only our own lines");
        assertThat(first.stream().filter(l -> l.startsWith("rlm-mcp: ")).toList())
                .as(String.join("\n", first))
                .hasSize(1)
                .allMatch(l -> l.contains("start-up cache") && l.contains("background"));
        // the cache appears without anyone waiting for it; the next start maps it and says nothing of it
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (cacheFiles().isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(250);
        }
        assertThat(cacheFiles())
                .as("the start-up cache in target/ (training log: %s)", trainingLog())
                .hasSize(1);
        List<String> second = stdioStart("auto");
        assertThat(second)
                .as(String.join("\n", second))
                .isNotEmpty()
                .allMatch(
                        l -> OUR_LINE.matcher(l).matches() && !l.startsWith("rlm-mcp: "),
                        "only the server's own log lines");
        if (Runtime.version().feature() == 25) {
            // stdio leaves the profile to the JIT: compiling all of it at start would slow the first answers
            assertThat(lastJvm).contains("-XX:AOTCache=").doesNotContain("AOTCompileEagerly");
            assertThat(serveJvm()).contains("-XX:AOTCache=", "-XX:+AOTCompileEagerly");
        }
    }

    /** The command line of the JVM `bin/rlm-mcp serve` execs, read once it has; the server is then stopped. */
    private static String serveJvm() throws Exception {
        Process process = launcher(root, "auto", "serve", "--port", "0", "--ephemeral", "--mcp-discovery", "false")
                .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
        try {
            Path cmdline = Path.of("/proc", Long.toString(process.pid()), "cmdline");
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (System.nanoTime() < deadline) {
                String jvm = Files.readString(cmdline).replace('\0', ' ');
                if (jvm.contains(" -jar ")) {
                    return jvm;
                }
                Thread.sleep(20);
            }
            throw new AssertionError("bin/rlm-mcp serve did not exec a JVM within 30 s");
        } finally {
            process.destroy();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    private static List<Path> cacheFiles() throws IOException {
        try (Stream<Path> files = Files.list(root.resolve("target"))) {
            return files.filter(p -> p.getFileName().toString().matches("rlm-mcp-.*\\.(aot|jsa)"))
                    .toList();
        }
    }

    private static String trainingLog() throws IOException {
        try (Stream<Path> files = Files.list(root.resolve("target"))) {
            for (Path log : files.filter(p -> p.toString().endsWith(".log")).toList()) {
                return Files.readString(log).lines().limit(20).reduce("", (a, b) -> a + "\n" + b);
            }
        }
        return "none";
    }

    @Test
    void aPortInUseIsOneLineAndExitCodeTwo() throws Exception {
        try (ServerSocket taken = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            Run run = run(
                    root,
                    "off",
                    "serve",
                    "--port",
                    String.valueOf(taken.getLocalPort()),
                    "--ephemeral",
                    "--mcp-discovery",
                    "false");
            assertThat(run.exit()).as(String.join("\n", run.stderr())).isEqualTo(2);
            assertThat(errorLines(run)).hasSize(2);
            assertThat(errorLines(run).get(0))
                    .contains("cannot listen on", String.valueOf(taken.getLocalPort()), "already in use", "--port");
            assertThat(errorLines(run).get(1)).startsWith("  --port=PORT ");
            assertNoTrace(run);
        }
    }

    @Test
    void aDataRootThatIsNotADirectoryIsOneLineAndExitCodeTwo() throws Exception {
        for (String bad : List.of(
                root.resolve("no-such-dir").toString(), root.resolve("pom.xml").toString())) {
            Run run = run(root, "off", "stdio", "--data-root", bad);
            assertThat(run.exit()).isEqualTo(2);
            assertThat(run.stderr()).as(String.join("\n", run.stderr())).hasSize(2);
            assertThat(run.stderr().get(0)).isEqualTo("rlm-mcp stdio: --data-root " + bad + " is not a directory");
            assertThat(run.stderr().get(1)).startsWith("  --data-root=DIR ");
            assertThat(run.stdout()).isEmpty();
        }
    }

    @Test
    void aStateDirThatCannotBeMadeIsOneLineAndExitCodeTwo() throws Exception {
        Run run = run(
                root,
                "off",
                "stdio",
                "--state-dir",
                root.resolve("pom.xml/state").toString(),
                "--mcp-discovery",
                "false");
        assertThat(run.exit()).isEqualTo(2);
        assertThat(errorLines(run)).hasSize(2);
        assertThat(errorLines(run).get(0)).contains("state directory", "--state-dir");
        assertThat(errorLines(run).get(1)).startsWith("  --state-dir=DIR ");
        assertNoTrace(run);
    }

    @Test
    void badFlagsAndValuesAreShortAndExitCodeTwo() throws Exception {
        Run typo = run(root, "off", "stdio", "--data-rot", "/tmp");
        assertThat(typo.exit()).isEqualTo(2);
        assertThat(typo.stderr()).hasSize(1);
        assertThat(typo.stderr().get(0)).contains("unknown option '--data-rot'", "did you mean --data-root");

        Run elsewhere = run(root, "off", "stdio", "--port", "9000");
        assertThat(elsewhere.exit()).isEqualTo(2);
        assertThat(elsewhere.stderr()).hasSize(1);
        assertThat(elsewhere.stderr().get(0)).contains("'--port'", "rlm-mcp serve");

        Run value = run(root, "off", "serve", "--port", "many");
        assertThat(value.exit()).isEqualTo(2);
        assertThat(value.stderr()).hasSize(2);
        assertThat(value.stderr().get(0)).contains("--port", "'many'");
        assertThat(value.stderr().get(1)).startsWith("  --port=PORT ");

        Run command = run(root, "off", "serv");
        assertThat(command.exit()).isEqualTo(2);
        assertThat(command.stderr()).hasSize(1);
        assertThat(command.stderr().get(0)).contains("'serv'", "did you mean serve");
    }

    /** stderr without the server's log lines (what the launcher and the error handlers printed). */
    private static List<String> errorLines(Run run) {
        return run.stderr().stream()
                .filter(l -> !l.matches("\\d{4}-\\d\\d-\\d\\dT.* (INFO|WARN) .*"))
                .toList();
    }

    private static void assertNoTrace(Run run) {
        assertThat(run.stderr())
                .as(String.join("\n", run.stderr()))
                .noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception") || l.startsWith("Usage:"));
    }
}
