package dev.rlmmcp.e2e.support;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** What the user-journey tests set up the way a user would: directories, files, venvs, a user account. */
public final class Journey {

    /** The non-root user the tests create (idempotently) and leave in place. */
    public static final String USER = "rlmjourney";

    private Journey() {}

    public static boolean isRoot() {
        return "root".equals(System.getProperty("user.name"));
    }

    /** Creates {@code base/parts...} with every new directory 0755 (a user's ordinary project tree). */
    public static Path dirs(Path base, String... parts) throws IOException {
        Path dir = base;
        for (String part : parts) {
            dir = dir.resolve(part);
            if (!Files.isDirectory(dir)) {
                Files.createDirectory(dir);
            }
            Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        }
        return dir;
    }

    /** Writes a file with mode 0644. */
    public static Path file(Path dir, String name, String content) throws IOException {
        Path file = dir.resolve(name);
        Files.writeString(file, content, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, PosixFilePermissions.fromString("rw-r--r--"));
        return file;
    }

    public static void mode(Path path, String mode) throws IOException {
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString(mode));
    }

    /** Four files, one per data type, 0644. */
    public static void typicalFiles(Path dir) throws IOException {
        file(dir, "notes.txt", "Quarterly notes\nrevenue up\nü€ fine\n");
        StringBuilder log = new StringBuilder();
        for (int i = 0; i < 1000; i++) {
            log.append(i % 10 == 0 ? "ERROR " : "INFO ")
                    .append("request ")
                    .append(i)
                    .append('\n');
        }
        file(dir, "app.log", log.toString());
        file(dir, "rows.csv", "city,count\nParis,3\nOslo,4\nLima,5\n");
        file(dir, "config.json", "{\"name\": \"acme\", \"tags\": [\"a\", \"b\"], \"depth\": 4}");
    }

    /** Loads the {@link #typicalFiles} through rlm_load_file and checks what the kernel holds. */
    public static void loadsTypicalFiles(SessionCalls calls, Path dataRoot, String sessionId) {
        Map<String, Object> base = sessionId == null ? Map.of() : Map.of("session_id", sessionId);
        record Load(String name, String path, String type) {}
        for (Load load : List.of(
                new Load("notes", "notes.txt", "text"),
                new Load("log", "app.log", "lines"),
                new Load("rows", "rows.csv", "csv"),
                new Load("cfg", dataRoot.resolve("config.json").toString(), "json"))) {
            java.util.HashMap<String, Object> args = new java.util.HashMap<>(base);
            args.putAll(Map.of("name", load.name(), "path", load.path(), "data_type", load.type()));
            JsonNode reply = calls.ok("rlm_load_file", args);
            assertThat(reply.toString()).as("rlm_load_file %s", load.path()).doesNotContain("\"error\":{");
        }
        java.util.HashMap<String, Object> args = new java.util.HashMap<>(base);
        args.put(
                "code",
                "print(len(notes), notes.splitlines()[2], len(log), sum('ERROR' in l for l in log), "
                        + "[r['city'] for r in rows], sum(int(r['count']) for r in rows), cfg['tags'], cfg['depth'])");
        JsonNode reply = calls.ok("rlm_execute", args);
        assertThat(reply.path("stdout").asText())
                .as(reply.toString())
                .isEqualTo("35 ü€ fine 1000 100 ['Paris', 'Oslo', 'Lima'] 12 ['a', 'b'] 4\n");
    }

    /**
     * A file of {@code bytes} bytes of numbered text lines (a 1 MiB block repeated, so {@code bytes} should be a
     * multiple of 1 MiB), written fast.
     */
    public static BigFile bigFile(Path file, long bytes) throws IOException {
        StringBuilder block = new StringBuilder(1 << 20);
        int n = 0;
        while (block.length() < (1 << 20) - 64) {
            block.append("line ").append(n++).append(" lorem ipsum dolor sit amet ERROR? no\n");
        }
        while (block.length() < 1 << 20) {
            block.append(block.length() == (1 << 20) - 1 ? '\n' : 'x');
        }
        byte[] chunk = block.toString().getBytes(StandardCharsets.US_ASCII);
        MessageDigest sha = sha256();
        try (FileChannel out = FileChannel.open(
                file, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING)) {
            long left = bytes;
            while (left > 0) {
                int len = (int) Math.min(left, chunk.length);
                ByteBuffer buf = ByteBuffer.wrap(chunk, 0, len);
                while (buf.hasRemaining()) {
                    out.write(buf);
                }
                sha.update(chunk, 0, len);
                left -= len;
            }
        }
        mode(file, "rw-r--r--");
        long newlines = 0;
        for (byte b : chunk) {
            newlines += b == '\n' ? 1 : 0;
        }
        return new BigFile(HexFormat.of().formatHex(sha.digest()), newlines * (bytes >> 20));
    }

    /** A generated file's SHA-256 (hex) and its number of lines. */
    public record BigFile(String sha256, long lines) {}

    static MessageDigest sha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Runs a command to completion (5 minutes at most) and returns its stdout; a non-zero exit fails. */
    public static String run(List<String> command) throws IOException, InterruptedException {
        return run(command, null);
    }

    public static String run(List<String> command, Path cwd) throws IOException, InterruptedException {
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        if (cwd != null) {
            builder.directory(cwd.toFile());
        }
        Process p = builder.start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(5, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("timed out: " + command);
        }
        if (p.exitValue() != 0) {
            throw new AssertionError("exit " + p.exitValue() + " from " + command + ":\n" + out);
        }
        return out;
    }

    /**
     * A venv of {@code python} made with {@code -m venv --without-pip}, with a package {@code pkg} of ours in
     * its site-packages that knows its own name. Returns the venv's directory.
     */
    public static Path venv(List<String> asUser, String python, Path dir, String pkg)
            throws IOException, InterruptedException {
        List<String> make = new ArrayList<>(asUser);
        make.addAll(List.of(python, "-m", "venv", "--without-pip", dir.toString()));
        run(make);
        List<String> where = new ArrayList<>(asUser);
        where.addAll(List.of(
                dir.resolve("bin/python").toString(),
                "-c",
                "import sysconfig; print(sysconfig.get_paths()['purelib'])"));
        Path site = Path.of(run(where).strip());
        Path pkgDir = site.resolve(pkg);
        List<String> mk = new ArrayList<>(asUser);
        mk.addAll(List.of("mkdir", "-p", pkgDir.toString()));
        run(mk);
        List<String> write = new ArrayList<>(asUser);
        write.addAll(List.of(
                "sh",
                "-c",
                "printf '%s\\n' \"MAGIC = 'made by the journey test'\" > \"$1\"",
                "sh",
                pkgDir.resolve("__init__.py").toString()));
        run(write);
        return dir;
    }

    /** {@code setpriv} to the test user, as a prefix for commands run as that user. */
    public static List<String> asUser() {
        return List.of(
                "setpriv",
                "--reuid=" + USER,
                "--regid=" + USER,
                "--init-groups",
                "env",
                "-i",
                "HOME=" + userHome(),
                "PATH=/usr/local/bin:/usr/bin:/bin",
                "LANG=C.UTF-8");
    }

    static Path userHome() {
        return Path.of("/home", USER);
    }

    /** The test user with a 0750 home directory; created only if missing (the user stays afterwards). */
    public static Path ensureUser() throws IOException, InterruptedException {
        ProcessBuilder probe = new ProcessBuilder("id", "-u", USER)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD);
        if (probe.start().waitFor() != 0) {
            run(List.of("useradd", "--create-home", "--home-dir", userHome().toString(), "--shell", "/bin/bash", USER));
        }
        if (!Files.isDirectory(userHome())) {
            run(List.of("mkdir", "-p", userHome().toString()));
            run(List.of("chown", USER + ":", userHome().toString()));
        }
        mode(userHome(), "rwxr-x---");
        return userHome();
    }

    /**
     * A copy of what a user needs to run the server (bin/, scripts/, target/rlm-mcp.jar) in a fresh directory
     * every user can read, so the checkout itself (perhaps below /root) is never opened up. Its target/
     * belongs to root: the launcher keeps no caches there, as on a read-only install.
     */
    public static Path distribution(Path into) throws IOException {
        Path root = McpDriver.projectRoot();
        mode(into, "rwxr-xr-x");
        for (String dir : List.of("bin", "scripts")) {
            copyTree(root.resolve(dir), into.resolve(dir));
        }
        Path target = dirs(into, "target");
        Files.copy(ServerProcess.jar(), target.resolve("rlm-mcp.jar"), StandardCopyOption.REPLACE_EXISTING);
        mode(target.resolve("rlm-mcp.jar"), "rw-r--r--");
        return into;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        try (Stream<Path> tree = Files.walk(from)) {
            for (Path p : tree.toList()) {
                Path dest = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(dest);
                    mode(dest, "rwxr-xr-x");
                } else {
                    Files.copy(p, dest, StandardCopyOption.REPLACE_EXISTING);
                    mode(dest, Files.isExecutable(p) ? "rwxr-xr-x" : "rw-r--r--");
                }
            }
        }
    }

    public static void deleteTree(Path dir) {
        if (dir != null && Files.exists(dir)) {
            ServerProcess.deleteTree(dir);
        }
    }

    public static void chownToUser(Path path) throws IOException, InterruptedException {
        run(List.of("chown", "-R", USER + ":" + USER, path.toString()));
    }

    /** The one project's state directory under a state root ({@code <root>/projects/<name>-<hash>}). */
    public static Path projectStateDir(Path stateRoot) throws IOException {
        try (Stream<Path> projects = Files.list(stateRoot.resolve("projects"))) {
            List<Path> all = projects.toList();
            assertThat(all).as("project state directories under %s", stateRoot).hasSize(1);
            return all.get(0);
        }
    }
}
