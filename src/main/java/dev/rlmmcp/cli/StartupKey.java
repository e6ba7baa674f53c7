package dev.rlmmcp.cli;

import dev.rlmmcp.bridge.ServerConfigs;
import dev.rlmmcp.transport.stdio.StartupAnswers;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Where a stdio server keeps the answers it gives at start-up ({@link StartupAnswers}): a file named after
 * everything they can depend on, read before the command line is: this build of the jar, the arguments
 * (and the files they name), the working directory, the environment variables the server reads, and the
 * MCP servers run_python's description lists. In $XDG_CACHE_HOME/rlm-mcp/startup, else
 * ~/.cache/rlm-mcp/startup.
 */
final class StartupKey {

    private static final String[] ENV_PREFIXES = {"RLM_", "MINIO_", "AWS_", "OPENAI_", "XDG_"};
    private static final List<String> ENV_NAMES = List.of("HOME", "APPDATA", "USER");

    private StartupKey() {}

    /** The file of the answers kept for a start with these arguments; null where there is no jar. */
    static Path file(String[] args) {
        try {
            Path jar = Path.of(Main.class
                    .getProtectionDomain()
                    .getCodeSource()
                    .getLocation()
                    .toURI());
            Path dir = directory();
            if (!Files.isRegularFile(jar)) {
                return null;
            }
            StringBuilder key = new StringBuilder();
            stat(key, jar);
            Path cwd = Path.of("").toAbsolutePath();
            key.append("cwd ").append(cwd).append('\n');
            for (String arg : args) {
                key.append("arg ").append(arg).append('\n');
                stat(key, arg.substring(arg.indexOf('=') + 1));
            }
            environment(key);
            // the servers run_python's description lists, not the files' times: a client rewrites its own
            // config (~/.claude.json) at every start, which would leave no start with kept answers
            key.append(ServerConfigs.fingerprint(UserHome.home(System.getenv()), cwd));
            return dir.resolve(Long.toHexString(fnv(key.toString())) + ".tsv");
        } catch (URISyntaxException | RuntimeException e) {
            return null;
        }
    }

    private static Path directory() {
        return UserHome.cacheHome(System.getenv()).resolve("rlm-mcp").resolve("startup");
    }

    /** The variables the server reads; of a secret, only that it is set. */
    private static void environment(StringBuilder key) {
        Map<String, String> read = new TreeMap<>();
        System.getenv().forEach((name, value) -> {
            boolean used = Arrays.stream(ENV_PREFIXES).anyMatch(name::startsWith) || ENV_NAMES.contains(name);
            if (used) {
                boolean secret = name.contains("KEY")
                        || name.contains("SECRET")
                        || name.contains("TOKEN")
                        || name.contains("PASSWORD");
                read.put(name, secret ? "(set)" : value);
            }
        });
        read.forEach((name, value) ->
                key.append("env ").append(name).append('=').append(value).append('\n'));
    }

    private static void stat(StringBuilder key, String maybePath) {
        if (!maybePath.isEmpty() && maybePath.indexOf('\0') < 0) {
            try {
                Path path = Path.of(maybePath);
                if (Files.isRegularFile(path)) {
                    stat(key, path);
                }
            } catch (RuntimeException e) {
                // not a path
            }
        }
    }

    /** A file's size and time, or that it is missing. */
    private static void stat(StringBuilder key, Path path) {
        try {
            BasicFileAttributes a = Files.readAttributes(path, BasicFileAttributes.class);
            key.append("file ")
                    .append(path)
                    .append(' ')
                    .append(a.size())
                    .append(' ')
                    .append(a.lastModifiedTime().toMillis())
                    .append('\n');
        } catch (IOException e) {
            key.append("none ").append(path).append('\n');
        }
    }

    /** FNV-1a, 64 bits: a name for the key, not a secret. */
    private static long fnv(String text) {
        long hash = 0xcbf29ce484222325L;
        for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
            hash ^= b & 0xFF;
            hash *= 0x100000001b3L;
        }
        return hash;
    }
}
