package dev.rlmmcp.kernel.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.kernel.channel.Kernel;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness package written from the build's classes: layout, permissions, reuse, bytecode. */
class HarnessTest {

    private static final Path SYSTEM_PYTHON = Path.of("/usr/bin/python3");

    @TempDir
    Path dir;

    @TempDir
    Path bin;

    @Test
    void installsThePackageAndABootstrapReadOnly() throws Exception {
        Path harness = Harness.install(dir);

        assertThat(harness.getParent()).isEqualTo(dir);
        assertThat(harness.getFileName().toString()).matches("harness-[0-9a-f]{12}");
        assertThat(Files.readString(harness.resolve("__main__.py"))).isEqualTo(Harness.BOOTSTRAP);
        for (String file : new String[] {"__init__.py", "__main__.py", "main.py", "protocol.py", "kernel.py"}) {
            Path path = harness.resolve("rlm_harness").resolve(file);
            assertThat(path).isRegularFile();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path)))
                    .isEqualTo("r--r--r--");
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(harness)))
                .isEqualTo("r-xr-xr-x");
        try (Stream<Path> files = Files.list(harness.resolve("rlm_harness"))) {
            assertThat(files.map(p -> p.getFileName().toString())).allMatch(name -> name.endsWith(".py"));
        }
    }

    @Test
    void aSecondInstallReusesTheFirstAndLeavesNoTemporaryDirectory() throws Exception {
        Path first = Harness.install(dir);
        Path second = Harness.install(dir);

        assertThat(second).isEqualTo(first);
        try (Stream<Path> entries = Files.list(dir)) {
            assertThat(entries).containsExactly(first);
        }
    }

    @Test
    void thePackageFilesAreListedFromTheClasses() throws Exception {
        assertThat(Harness.packageFiles())
                .containsKeys("__init__.py", "main.py", "protocol.py", "store.py")
                .allSatisfy((name, code) -> assertThat(code).isNotEmpty());
    }

    @Test
    void holdsTheInterpretersBytecodeForEveryModuleReadOnly() throws Exception {
        PythonLocator.Python python = PythonLocator.locate(SYSTEM_PYTHON.toString());
        Path harness = Harness.install(dir, python);

        assertThat(harness.getFileName().toString())
                .matches("harness-[0-9a-f]{12}-" + python.version().replace(".", "\\.") + "-[0-9a-f]{8}");
        assertThat(harness.getFileName().toString())
                .startsWith(Harness.install(dir).getFileName() + "-");
        String tag = cacheTag(python);
        List<String> sources = sources(harness);
        assertThat(sources)
                .contains("__main__.py", "rlm_harness/__init__.py", "rlm_harness/main.py", "rlm_harness/store.py");
        for (String source : sources) {
            Path file = harness.resolve(source);
            Path pyc = file.resolveSibling("__pycache__")
                    .resolve(file.getFileName().toString().replace(".py", "." + tag + ".pyc"));
            assertThat(pyc).isRegularFile();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(pyc)))
                    .isEqualTo("r--r--r--");
            // PEP 552 flags: hash-based (1), source not checked (no 2)
            assertThat(ByteBuffer.wrap(Files.readAllBytes(pyc), 4, 4)
                            .order(ByteOrder.LITTLE_ENDIAN)
                            .getInt())
                    .isEqualTo(1);
        }
        assertThat(PosixFilePermissions.toString(
                        Files.getPosixFilePermissions(harness.resolve("rlm_harness/__pycache__"))))
                .isEqualTo("r-xr-xr-x");
        assertThat(Harness.install(dir, python)).isEqualTo(harness);
        try (Stream<Path> entries = Files.list(dir)) {
            assertThat(entries.map(p -> p.getFileName().toString())).noneMatch(name -> name.startsWith("."));
        }
    }

    @Test
    void aKernelLoadsTheModulesFromBytecodeNotFromSource() throws Exception {
        PythonLocator.Python python = PythonLocator.locate(SYSTEM_PYTHON.toString());
        Path copy = copy(Harness.install(dir, python), dir.resolve("copy"));
        // sources that fail if run: only bytecode can start this harness (the loader still stats the sources)
        for (String source : sources(copy)) {
            Files.writeString(copy.resolve(source), "raise ImportError('compiled from source: " + source + "')\n");
        }

        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        KernelSpec spec = new KernelSpec(python.executable(), copy, List.of("{}"), dir, List.of(dir));
        try (Kernel kernel = Kernel.start(
                new ProcessLauncher(), spec, new ObjectMapper(), timer, "pyc-test", Duration.ofSeconds(30))) {
            assertThat(kernel.ready().compatible()).isTrue();
        } finally {
            timer.shutdownNow();
        }
        List<String> modules = sources(copy).stream()
                .filter(s -> s.startsWith("rlm_harness/") && !s.endsWith("__main__.py"))
                .map(s -> s.replace(".py", "").replace("/", ".").replace(".__init__", ""))
                .toList();
        List<String> args = new ArrayList<>(List.of(
                "-I",
                "-B",
                "-c",
                "import importlib, sys\nsys.path.insert(0, sys.argv[1])\n"
                        + "for m in sys.argv[2:]:\n    importlib.import_module(m)\nprint('imported', len(sys.argv) - 2)",
                copy.toString()));
        args.addAll(modules);
        String out = run(python.executable(), args.toArray(String[]::new));
        assertThat(out).isEqualTo("imported " + modules.size());
    }

    @Test
    void eachInterpreterBuildGetsItsOwnDirectoryAndKernelsStartFromIt() throws Exception {
        Map<String, PythonLocator.Python> builds = new LinkedHashMap<>();
        for (Path candidate : interpreters()) {
            try {
                PythonLocator.Python python = PythonLocator.locate(candidate.toString());
                builds.putIfAbsent(python.build(), python);
            } catch (IllegalStateException e) {
                // too old, or not a Python
            }
        }
        assumeTrue(builds.size() >= 2, "two Python builds are needed, found " + builds.keySet());

        List<Path> dirs = new ArrayList<>();
        ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
        try {
            for (PythonLocator.Python python : builds.values()) {
                Path harness = Harness.install(dir, python);
                dirs.add(harness);
                String tag = cacheTag(python);
                assertThat(harness.resolve("rlm_harness/__pycache__/kernel." + tag + ".pyc"))
                        .as(python.toString())
                        .isRegularFile();
                try (Stream<Path> pyc = Files.list(harness.resolve("rlm_harness/__pycache__"))) {
                    assertThat(pyc.map(p -> p.getFileName().toString()))
                            .allMatch(name -> name.contains("." + tag + "."));
                }
                KernelSpec spec = new KernelSpec(python.executable(), harness, List.of("{}"), dir, List.of(dir));
                try (Kernel kernel = Kernel.start(
                        new ProcessLauncher(), spec, new ObjectMapper(), timer, "pyc-test", Duration.ofSeconds(30))) {
                    assertThat(kernel.ready().python()).isEqualTo(python.version());
                }
            }
        } finally {
            timer.shutdownNow();
        }
        assertThat(dirs).doesNotHaveDuplicates();
    }

    @Test
    void anInterpreterThatCannotCompileGetsTheSources() throws Exception {
        Path failing = script("failing", "echo 'cannot compile' >&2; echo cpython-399; exit 1");
        Path idle = script("idle", "echo cpython-399");
        for (Path odd : List.of(failing, idle)) {
            PythonLocator.Python python =
                    new PythonLocator.Python(odd, "3.99.0", "3.99.0 (" + odd.getFileName() + ")", List.of(), List.of());

            Path harness = Harness.install(dir, python);

            assertThat(harness).isEqualTo(Harness.install(dir));
            try (Stream<Path> entries = Files.walk(harness)) {
                assertThat(entries.map(p -> p.getFileName().toString())).noneMatch(name -> name.equals("__pycache__"));
            }
        }
        try (Stream<Path> entries = Files.list(dir)) {
            assertThat(entries.map(p -> p.getFileName().toString()))
                    .containsExactly(Harness.install(dir).getFileName().toString());
        }
    }

    @Test
    void serversInstallingAtOnceShareOneCompleteDirectory() throws Exception {
        PythonLocator.Python python = PythonLocator.locate(SYSTEM_PYTHON.toString());
        ExecutorService pool = Executors.newFixedThreadPool(4);
        List<Future<Path>> installs = new ArrayList<>();
        try {
            for (int i = 0; i < 4; i++) {
                installs.add(pool.submit(() -> Harness.install(dir, python)));
            }
            Path first = installs.get(0).get();
            for (Future<Path> install : installs) {
                assertThat(install.get()).isEqualTo(first);
            }
            assertThat(first.resolve("rlm_harness/__pycache__")).isDirectory();
        } finally {
            pool.shutdownNow();
        }
        try (Stream<Path> entries = Files.list(dir)) {
            assertThat(entries.map(p -> p.getFileName().toString())).noneMatch(name -> name.startsWith("."));
        }
    }

    /** Every .py under {@code root}, relative. */
    private static List<String> sources(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            return walk.filter(p -> p.toString().endsWith(".py"))
                    .map(p -> root.relativize(p).toString())
                    .sorted()
                    .toList();
        }
    }

    private static String cacheTag(PythonLocator.Python python) throws Exception {
        return run(python.executable(), "-I", "-c", "import sys; print(sys.implementation.cache_tag)");
    }

    private static String run(Path python, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(python.toString()));
        command.addAll(List.of(args));
        Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(process.waitFor()).as(out).isZero();
        return out;
    }

    /** A writable copy of a (read-only) harness directory. */
    private static Path copy(Path from, Path to) throws IOException {
        try (Stream<Path> walk = Files.walk(from)) {
            for (Path path : walk.toList()) {
                Path target = to.resolve(from.relativize(path).toString());
                if (Files.isDirectory(path)) {
                    Files.createDirectories(target);
                } else {
                    Files.copy(path, target);
                    target.toFile().setWritable(true, true);
                }
            }
        }
        return to;
    }

    private Path script(String name, String body) throws IOException {
        Path script = bin.resolve(name);
        Files.writeString(script, "#!/bin/sh\n" + body + "\n");
        script.toFile().setExecutable(true);
        return script;
    }

    /** The system's python3 and, where pyenv keeps them, other versions. */
    private static List<Path> interpreters() throws IOException {
        List<Path> found = new ArrayList<>(List.of(SYSTEM_PYTHON));
        String root = System.getenv().getOrDefault("PYENV_ROOT", System.getProperty("user.home") + "/.pyenv");
        Path versions = Path.of(root, "versions");
        if (Files.isDirectory(versions)) {
            try (Stream<Path> each = Files.list(versions)) {
                each.map(v -> v.resolve("bin/python3"))
                        .filter(Files::isExecutable)
                        .sorted()
                        .forEach(found::add);
            }
        }
        return found;
    }
}
