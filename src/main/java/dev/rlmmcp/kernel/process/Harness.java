package dev.rlmmcp.kernel.process;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Python side of the kernel: the package {@code rlm_harness} (src/main/python), shipped in the jar
 * and written once to a private directory as {@code harness-<hash>/}, holding the package and a
 * bootstrap {@code __main__.py}. Launchers run that directory ({@code python -I -B <dir> <config>}):
 * Python runs its {@code __main__.py} with the directory first on sys.path, even under {@code -I}, so the
 * package imports as {@code rlm_harness}. Once the server knows its interpreter, kernels run a copy that
 * also holds that interpreter's bytecode ({@link #install(Path, PythonLocator.Python)}): {@code -B} only
 * stops a kernel writing .pyc files, not reading them.
 */
public final class Harness {

    /** The package's place among the classes: in the jar, or target/classes when run from the build. */
    private static final String PACKAGE = "rlm_harness";

    static final String BOOTSTRAP = "from rlm_harness.main import main\n\nmain()\n";
    /**
     * Run as {@code python -I -c COMPILE <dir>}: compiles the tree, prints the interpreter's cache tag (the
     * middle of the .pyc names it looks for; none: it caches no bytecode) and fails if anything did not compile.
     */
    static final String COMPILE = String.join(
            "\n",
            "import compileall, py_compile, sys",
            "tag = sys.implementation.cache_tag",
            "ok = tag is not None and compileall.compile_dir(sys.argv[1], quiet=1, force=True,",
            "    invalidation_mode=py_compile.PycInvalidationMode.UNCHECKED_HASH)",
            "print(tag)",
            "sys.exit(0 if ok else 1)",
            "");

    static final Duration COMPILE_TIMEOUT = Duration.ofSeconds(60);

    private static final Logger log = LoggerFactory.getLogger(Harness.class);

    private Harness() {}

    /**
     * Writes the harness under {@code dir} (named by the hash of all its files, so versions never mix),
     * read-only and atomically (built in a temporary directory, then renamed), and returns the directory
     * the launchers run. Source only: every kernel compiles it at start ({@code -B}, and a read-only
     * directory), as a container's, whose Python is the image's, must.
     */
    public static Path install(Path dir) {
        try {
            Layout layout = layout();
            return install(dir, "harness-" + layout.hash(), layout, null);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install the kernel harness in " + dir, e);
        }
    }

    /**
     * The harness as {@link #install(Path)} writes it, plus its bytecode compiled by {@code python} (into
     * each source's {@code __pycache__}, where that interpreter looks for it even under {@code -B}), so that
     * its kernels load the modules instead of compiling them at every start. One directory per harness and
     * interpreter build ({@code harness-<hash>-<version>-<build hash>}): several interpreters, several
     * servers, never share or rewrite one. Hash-based, unchecked bytecode: the sources beside it can never
     * change (read-only, named by their hash), so a kernel neither compares their times nor reads and hashes them.
     * If {@code python} cannot compile it (an odd interpreter, a time-out), the source-only harness.
     */
    public static Path install(Path dir, PythonLocator.Python python) {
        try {
            Layout layout = layout();
            String build = HexFormat.of().formatHex(sha256(python.build().getBytes(StandardCharsets.UTF_8)), 0, 4);
            String name =
                    "harness-" + layout.hash() + "-" + python.version().replaceAll("[^0-9A-Za-z.+]", "_") + "-" + build;
            return install(dir, name, layout, python.executable());
        } catch (IOException | RuntimeException e) {
            log.warn("kernels compile the harness at each start: {} cannot compile it ({})", python, e.getMessage());
            return install(dir);
        }
    }

    /** The files to write, the bootstrap first, and the hash of them all. */
    private record Layout(String hash, Map<String, byte[]> files) {}

    private static Layout layout() throws IOException {
        Map<String, byte[]> layout = new LinkedHashMap<>();
        layout.put("__main__.py", BOOTSTRAP.getBytes(StandardCharsets.UTF_8));
        packageFiles().forEach((name, code) -> layout.put(PACKAGE + "/" + name, code));
        MessageDigest digest = sha256();
        layout.forEach((name, code) -> {
            digest.update(name.getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(Long.toString(code.length).getBytes(StandardCharsets.UTF_8));
            digest.update((byte) 0);
            digest.update(code);
        });
        return new Layout(HexFormat.of().formatHex(digest.digest(), 0, 6), layout);
    }

    /**
     * Writes {@code layout} as {@code dir/name}, compiled by {@code python} unless null, unless it is
     * there already. Only a complete directory is ever renamed into place, and never over another.
     */
    private static Path install(Path dir, String name, Layout layout, Path python) throws IOException {
        Files.createDirectories(dir);
        Path target = dir.resolve(name);
        if (Files.isRegularFile(target.resolve(PACKAGE).resolve("__init__.py"))) {
            return target;
        }
        Path temp = Files.createTempDirectory(dir, ".harness-");
        try {
            Files.createDirectories(temp.resolve(PACKAGE));
            for (Map.Entry<String, byte[]> file : layout.files().entrySet()) {
                Files.write(temp.resolve(file.getKey()), file.getValue());
            }
            if (python != null) {
                compile(python, temp, layout.files().keySet());
            }
            readOnly(temp);
            try {
                Files.move(temp, target, StandardCopyOption.ATOMIC_MOVE);
            } catch (IOException e) {
                // another server installed the same harness meanwhile: theirs serves
                if (!Files.isRegularFile(target.resolve(PACKAGE).resolve("__init__.py"))) {
                    throw e;
                }
            }
        } finally {
            removeTree(temp);
        }
        return target;
    }

    /**
     * Compiles every source under {@code root} with {@code python} ({@code -I}, as kernels run), as
     * unchecked hash-based .pyc files, and checks that each source has its file for that interpreter's tag.
     */
    static void compile(Path python, Path root, Iterable<String> sources) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(List.of(python.toString(), "-I", "-c", COMPILE, root.toString()))
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")));
        builder.environment().clear();
        builder.environment()
                .putAll(Map.of("PATH", "/usr/local/bin:/usr/bin:/bin", "LANG", "C.UTF-8", "LC_ALL", "C.UTF-8"));
        Process process = builder.start();
        try {
            CompletableFuture<byte[]> out = CompletableFuture.supplyAsync(
                    () -> {
                        try (InputStream in = process.getInputStream()) {
                            return in.readAllBytes();
                        } catch (IOException e) {
                            return new byte[0];
                        }
                    },
                    Thread::startVirtualThread);
            if (!process.waitFor(COMPILE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("it did not finish within " + COMPILE_TIMEOUT.toSeconds() + " s");
            }
            String[] lines =
                    new String(out.join(), StandardCharsets.UTF_8).strip().split("\n");
            String tag = lines[lines.length - 1].strip();
            if (process.exitValue() != 0) {
                throw new IOException("exit code " + process.exitValue() + ": " + tag);
            }
            for (String source : sources) {
                Path file = root.resolve(source);
                String stem = file.getFileName().toString().replaceFirst("\\.py$", "");
                if (!Files.isRegularFile(file.resolveSibling("__pycache__").resolve(stem + "." + tag + ".pyc"))) {
                    throw new IOException("no bytecode for " + source + " (tag '" + tag + "')");
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted", e);
        } finally {
            process.destroyForcibly();
        }
    }

    /** Makes everything under {@code root} read-only, for everyone to read (kernels may run as another uid). */
    private static void readOnly(Path root) throws IOException {
        try (Stream<Path> walk = Files.walk(root)) {
            for (Path path : walk.sorted(Comparator.reverseOrder()).toList()) {
                Files.setPosixFilePermissions(
                        path,
                        PosixFilePermissions.fromString(
                                Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS) ? "r-xr-xr-x" : "r--r--r--"));
            }
        }
    }

    private static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    private static byte[] sha256(byte[] bytes) {
        return sha256().digest(bytes);
    }

    /**
     * The package's .py files, by name, read from the jar (its entries under the package's directory)
     * or from a directory (target/classes when run from the build).
     */
    static SortedMap<String, byte[]> packageFiles() throws IOException {
        URL init = Harness.class.getResource(PACKAGE + "/__init__.py");
        if (init == null) {
            throw new IllegalStateException("the kernel harness (" + PACKAGE + ") is missing from the jar");
        }
        try {
            if (init.openConnection() instanceof JarURLConnection entry) {
                entry.setUseCaches(false);
                try (JarFile jar = entry.getJarFile()) {
                    return read(
                            jar,
                            entry.getEntryName()
                                    .substring(0, entry.getEntryName().lastIndexOf('/') + 1));
                }
            }
            return read(Path.of(init.toURI()).getParent());
        } catch (URISyntaxException e) {
            throw new IOException("cannot locate the kernel harness at " + init, e);
        }
    }

    private static SortedMap<String, byte[]> read(JarFile jar, String packageDir) throws IOException {
        SortedMap<String, byte[]> files = new TreeMap<>();
        for (Enumeration<JarEntry> entries = jar.entries(); entries.hasMoreElements(); ) {
            JarEntry entry = entries.nextElement();
            String name =
                    entry.getName().startsWith(packageDir) ? entry.getName().substring(packageDir.length()) : "";
            if (name.endsWith(".py") && name.indexOf('/') < 0) {
                try (InputStream in = jar.getInputStream(entry)) {
                    files.put(name, in.readAllBytes());
                }
            }
        }
        return complete(files, jar.getName() + "!/" + packageDir);
    }

    private static SortedMap<String, byte[]> read(Path packageDir) throws IOException {
        SortedMap<String, byte[]> files = new TreeMap<>();
        try (Stream<Path> entries = Files.list(packageDir)) {
            for (Path path : entries.filter(p -> p.getFileName().toString().endsWith(".py"))
                    .toList()) {
                files.put(path.getFileName().toString(), Files.readAllBytes(path));
            }
        }
        return complete(files, packageDir.toString());
    }

    private static SortedMap<String, byte[]> complete(SortedMap<String, byte[]> files, String where)
            throws IOException {
        if (!files.containsKey("__init__.py") || !files.containsKey("main.py")) {
            throw new IOException("the kernel harness at " + where + " is incomplete: " + files.keySet());
        }
        return files;
    }

    /** Removes what is left of a temporary directory (made writable again first: its parts are read-only). */
    private static void removeTree(Path root) {
        if (!Files.exists(root)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(root)) {
            List<Path> paths = walk.sorted(Comparator.reverseOrder()).toList();
            for (Path path : paths) {
                if (Files.isDirectory(path)) {
                    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rwx------"));
                }
            }
            for (Path path : paths) {
                Files.deleteIfExists(path);
            }
        } catch (IOException e) {
            // a stray temporary directory is harmless: it is never run
        }
    }
}
