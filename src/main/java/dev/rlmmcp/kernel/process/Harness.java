package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.JarURLConnection;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Comparator;
import java.util.Enumeration;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedMap;
import java.util.TreeMap;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * The Python side of the kernel: the package {@code rlm_harness} (src/main/python), shipped in the jar
 * and written once to a private directory as {@code harness-<hash>/}, holding the package and a
 * bootstrap {@code __main__.py}. Launchers run that directory ({@code python -I -B <dir> <config>}):
 * Python runs its {@code __main__.py} with the directory first on sys.path, even under {@code -I}, so the
 * package imports as {@code rlm_harness}.
 */
public final class Harness {

    /** The package's place among the classes: in the jar, or target/classes when run from the build. */
    private static final String PACKAGE = "rlm_harness";
    static final String BOOTSTRAP = "from rlm_harness.main import main\n\nmain()\n";

    private Harness() {
    }

    /**
     * Writes the harness under {@code dir} (named by the hash of all its files, so versions never mix),
     * read-only and atomically (built in a temporary directory, then renamed), and returns the directory
     * the launchers run.
     */
    public static Path install(Path dir) {
        try {
            SortedMap<String, byte[]> files = packageFiles();
            MessageDigest digest = MessageDigest.getInstance("SHA-256");
            Map<String, byte[]> layout = new LinkedHashMap<>();
            layout.put("__main__.py", BOOTSTRAP.getBytes(StandardCharsets.UTF_8));
            files.forEach((name, code) -> layout.put(PACKAGE + "/" + name, code));
            layout.forEach((name, code) -> {
                digest.update(name.getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
                digest.update(Long.toString(code.length).getBytes(StandardCharsets.UTF_8));
                digest.update((byte) 0);
                digest.update(code);
            });
            String hash = HexFormat.of().formatHex(digest.digest(), 0, 6);
            Files.createDirectories(dir);
            Path target = dir.resolve("harness-" + hash);
            if (Files.isRegularFile(target.resolve(PACKAGE).resolve("__init__.py"))) {
                return target;
            }
            Path temp = Files.createTempDirectory(dir, ".harness-");
            try {
                Files.createDirectories(temp.resolve(PACKAGE));
                for (Map.Entry<String, byte[]> file : layout.entrySet()) {
                    Path path = temp.resolve(file.getKey());
                    Files.write(path, file.getValue());
                    Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("r--r--r--"));
                }
                Files.setPosixFilePermissions(temp.resolve(PACKAGE), PosixFilePermissions.fromString("r-xr-xr-x"));
                Files.setPosixFilePermissions(temp, PosixFilePermissions.fromString("r-xr-xr-x"));
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
        } catch (IOException e) {
            throw new UncheckedIOException("cannot install the kernel harness in " + dir, e);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
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
                    return read(jar, entry.getEntryName().substring(0, entry.getEntryName().lastIndexOf('/') + 1));
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
            String name = entry.getName().startsWith(packageDir) ? entry.getName().substring(packageDir.length()) : "";
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
            for (Path path : entries.filter(p -> p.getFileName().toString().endsWith(".py")).toList()) {
                files.put(path.getFileName().toString(), Files.readAllBytes(path));
            }
        }
        return complete(files, packageDir.toString());
    }

    private static SortedMap<String, byte[]> complete(SortedMap<String, byte[]> files, String where) throws IOException {
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
