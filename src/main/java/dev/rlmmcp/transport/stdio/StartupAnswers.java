package dev.rlmmcp.transport.stdio;

import dev.rlmmcp.transport.McpServers;
import dev.rlmmcp.transport.stateless.StatelessServer;
import io.modelcontextprotocol.spec.McpSchema;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.slf4j.LoggerFactory;

/**
 * What a stdio server answered to initialize, ping and the lists (in every revision), kept in a file
 * named after everything those answers depend on (see {@code cli.StartupKey}), so that the next start
 * with the same configuration answers them as soon as its JVM runs ({@link StdioFront}), long before
 * picocli, the kernels' sandbox and the SDK are ready. The server still handles every such request
 * itself once ready and compares: an answer that differs is never sent twice but is logged and replaces
 * the kept one, so a configuration the key missed is wrong for one start at most. A configuration's first
 * start has none kept: it makes them from its configuration before its SDK server exists ({@link #offer}).
 */
public final class StartupAnswers {

    /** Stands for the request id while an answer is kept: an answer is its bytes around the id. */
    private static final String ID = "rlm-startup-answer-id-4f1c";

    private static final String WITHOUT_SAMPLING = " for a client that does not sample";
    private static final byte[] ID_JSON = ('"' + ID + '"').getBytes(StandardCharsets.US_ASCII);
    private static final Set<String> LISTS =
            Set.of(McpSchema.METHOD_PING, McpSchema.METHOD_TOOLS_LIST, McpSchema.METHOD_PROMPT_LIST);
    private static final Set<String> STATELESS_LISTS =
            Set.of(StatelessServer.METHOD_DISCOVER, McpSchema.METHOD_TOOLS_LIST, McpSchema.METHOD_PROMPT_LIST);
    /** Files kept in the directory: one per configuration recently started. */
    private static final int KEPT = 32;

    /** An answer without its id: {@code before + id + after}. */
    record Answer(byte[] before, byte[] after) {

        byte[] with(byte[] id) {
            byte[] all = Arrays.copyOf(before, before.length + id.length + after.length);
            System.arraycopy(id, 0, all, before.length, id.length);
            System.arraycopy(after, 0, all, before.length + id.length, after.length);
            return all;
        }
    }

    private volatile Path file;
    private final Map<String, Answer> kept = new ConcurrentHashMap<>();
    /** Answers this start made from its own configuration before its server was built (see {@link #offer}). */
    private final Map<String, Answer> made = new ConcurrentHashMap<>();

    private volatile boolean offered;
    private volatile Runnable onAnswers = () -> {};
    /** What was answered before the server was ready, by request id (see {@link #idKey}). */
    private final Map<String, byte[]> answeredEarly = new ConcurrentHashMap<>();

    private volatile boolean dirty;

    private StartupAnswers(Path file) {
        this.file = file;
    }

    /** Nothing kept and nothing read: every answer comes from the server. */
    public static StartupAnswers none() {
        return new StartupAnswers(null);
    }

    /** The answers kept in {@code file}: see {@link #load}. */
    public static StartupAnswers in(Path file) {
        StartupAnswers answers = new StartupAnswers(null);
        answers.load(file);
        return answers;
    }

    /**
     * Reads the answers kept in {@code file} (none if it is missing or unreadable), where they are kept
     * again when they change, and gives them to requests that wait. One answer a line: its key, the bytes
     * before the id and those after, tab-separated (compact JSON has no raw tab or newline). Read with no
     * JSON library: this runs before anything else at start.
     */
    public void load(Path file) {
        this.file = file;
        try {
            for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                String[] parts = line.split("\t", -1);
                if (parts.length == 3) {
                    kept.put(
                            parts[0],
                            new Answer(
                                    parts[1].getBytes(StandardCharsets.UTF_8),
                                    parts[2].getBytes(StandardCharsets.UTF_8)));
                }
            }
        } catch (IOException | RuntimeException e) {
            kept.clear(); // missing (the first start) or damaged: made again by this start
        }
        onAnswers.run();
    }

    /**
     * The key of a request's answer if it depends on nothing but the server's configuration and the
     * protocol version asked for; else null (then it is never answered early). For protocol 2026-07-28 the
     * request must also be one {@link StatelessServer#check} lets through.
     */
    static String key(String method, Object params) {
        Map<?, ?> p = params instanceof Map<?, ?> m ? m : Map.of();
        Map<?, ?> meta = p.get("_meta") instanceof Map<?, ?> m ? m : null;
        boolean onlyMeta = p.keySet().stream().allMatch("_meta"::equals);
        if (StatelessServer.isOwn(meta)) {
            return onlyMeta && StatelessServer.isComplete(meta) && STATELESS_LISTS.contains(method)
                    ? StatelessServer.VERSION + " " + forClient(method, StatelessServer.declaresSampling(meta))
                    : null;
        }
        if (McpSchema.METHOD_INITIALIZE.equals(method)) {
            return p.get("protocolVersion") instanceof String version ? method + " " + version : null;
        }
        return onlyMeta && LISTS.contains(method) ? method : null;
    }

    /**
     * The key of an answer for a client that samples or one that does not: the same, but for tools/list,
     * which lists a client that does not sample fewer tools ({@link dev.rlmmcp.transport.ToolOffer}).
     */
    static String forClient(String key, boolean clientSamples) {
        return clientSamples || !McpSchema.METHOD_TOOLS_LIST.equals(key) ? key : key + WITHOUT_SAMPLING;
    }

    /**
     * Whether a request with this answer key may be answered only after an initialize: the lists of the revisions
     * before 2026-07-28 (a client that sends one first is told to initialize, by the server).
     */
    static boolean afterInitialize(String key) {
        return McpSchema.METHOD_TOOLS_LIST.equals(key) || McpSchema.METHOD_PROMPT_LIST.equals(key);
    }

    /** How a request id is told apart here: the same for the front's parse and the transport's. */
    static String idKey(Object id) {
        return id instanceof Number n ? "n" + n.longValue() : "s" + id;
    }

    /** The kept answer for {@code key} with this JSON id, else the one this start made, or null. */
    byte[] answer(String key, byte[] idJson) {
        Answer answer = key == null ? null : kept.getOrDefault(key, made.get(key));
        return answer == null ? null : answer.with(idJson);
    }

    /**
     * Makes, from {@code servers} alone, the answers to initialize (for each of {@code versions}, the
     * protocol versions the transport speaks, the last its latest), tools/list and prompts/list, as the
     * SDK server being built will give them: a configuration's first start has no kept answers, and its
     * SDK server answers its first request a good part of a second after the JVM started, later than an
     * agent client gives it (Codex: one second). They are given until the server answers itself, which
     * checks them as it checks kept ones; they are kept for the next start only as the server answers.
     */
    public void offer(McpServers servers, List<String> versions) {
        for (String version : versions) {
            made(
                    McpSchema.METHOD_INITIALIZE + " " + version,
                    () -> StartupJson.initialize(ID, servers.initializeResult(version)));
        }
        McpSchema.ListToolsResult tools = servers.toolList();
        made(McpSchema.METHOD_TOOLS_LIST, () -> StartupJson.tools(ID, tools));
        made(
                forClient(McpSchema.METHOD_TOOLS_LIST, false),
                () -> StartupJson.tools(ID, servers.toolOffer().forClient(tools, false)));
        servers.promptList()
                .ifPresent(prompts -> made(McpSchema.METHOD_PROMPT_LIST, () -> StartupJson.prompts(ID, prompts)));
        offered = true;
        onAnswers.run();
    }

    private interface Made {
        byte[] json() throws StartupJson.Unwritable;
    }

    private void made(String key, Made answer) {
        try {
            made.put(key, split(answer.json()));
        } catch (StartupJson.Unwritable e) {
            // the server answers it
        }
    }

    /** Whether {@link #offer} has run: a request it gave no answer for is the server's to answer. */
    boolean offered() {
        return offered;
    }

    /** Runs {@code action} whenever answers come: kept ones read ({@link #load}) or made ones ({@link #offer}). */
    void onAnswers(Runnable action) {
        onAnswers = action;
        action.run();
    }

    /** Records that {@code bytes} answered request {@code id} before the server was ready. */
    void answeredEarly(Object id, byte[] bytes) {
        answeredEarly.put(idKey(id), bytes);
    }

    /**
     * The server's own answer {@code bytes} to request {@code id} (whose answer's key is {@code key}, or null;
     * {@code kept}: the same answer with {@link #keptId} for its id): kept for the next start, and whether
     * it must still be sent (false: it was answered early; an early answer that differed is logged).
     */
    boolean serverAnswered(Object id, String key, byte[] bytes, Supplier<byte[]> kept) {
        byte[] early = answeredEarly.remove(idKey(id));
        if (key != null && file != null) {
            keep(key, kept.get());
        }
        if (early == null) {
            return true;
        }
        if (!Arrays.equals(early, bytes)) {
            LoggerFactory.getLogger(StartupAnswers.class)
                    .warn(
                            "the answer to {} given at start-up differs from this server's: {}",
                            key,
                            made.containsKey(key) && !this.kept.containsKey(key)
                                    ? "the start made it from its configuration in a way the SDK does not"
                                    : "its configuration changed in a way the start-up cache " + file
                                            + " did not see; the next start answers as this server does");
        }
        return false;
    }

    /** Whether no answer was kept, e.g. by an earlier start. */
    public boolean isEmpty() {
        return kept.isEmpty();
    }

    private void keep(String key, byte[] bytes) {
        Answer answer = split(bytes);
        if (answer == null) {
            return;
        }
        Answer before = kept.put(key, answer);
        if (before == null
                || !Arrays.equals(before.before(), answer.before())
                || !Arrays.equals(before.after(), answer.after())) {
            dirty = true;
        }
    }

    /** The answer in {@code bytes} around its id, {@link #ID}; null if it has none. */
    private static Answer split(byte[] bytes) {
        int at = indexOf(bytes, ID_JSON);
        return at < 0
                ? null
                : new Answer(
                        Arrays.copyOfRange(bytes, 0, at), Arrays.copyOfRange(bytes, at + ID_JSON.length, bytes.length));
    }

    /** The id an answer is made with before it is kept. */
    static Object keptId() {
        return ID;
    }

    /** Writes the answers to the file if they changed, off the caller's thread. */
    void saveLater() {
        if (file != null && dirty) {
            Thread.ofVirtual().start(this::save);
        }
    }

    /** Writes the answers to the file if they changed (to a temporary file renamed over it), and keeps the directory small. */
    public synchronized void save() {
        if (file == null || !dirty) {
            return;
        }
        dirty = false;
        StringBuilder out = new StringBuilder();
        new TreeMap<>(kept)
                .forEach((key, answer) -> out.append(key)
                        .append('\t')
                        .append(new String(answer.before(), StandardCharsets.UTF_8))
                        .append('\t')
                        .append(new String(answer.after(), StandardCharsets.UTF_8))
                        .append('\n'));
        try {
            if (!Files.isDirectory(file.getParent())) {
                // the tool descriptions name the data root and the configured MCP servers: the user's alone
                Files.createDirectories(
                        file.getParent(),
                        PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            }
            Path tmp = file.resolveSibling(
                    file.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
            Files.writeString(tmp, out, StandardCharsets.UTF_8);
            Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
            prune(file.getParent());
        } catch (IOException | RuntimeException e) {
            LoggerFactory.getLogger(StartupAnswers.class)
                    .warn("cannot keep the start-up answers in {}: {}", file, e.toString());
        }
    }

    private static void prune(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            List<Path> old = files.filter(f -> f.getFileName().toString().endsWith(".tsv"))
                    .sorted(Comparator.comparing(StartupAnswers::modified).reversed())
                    .skip(KEPT)
                    .toList();
            for (Path f : old) {
                Files.deleteIfExists(f);
            }
        }
    }

    private static long modified(Path file) {
        try {
            return Files.getLastModifiedTime(file).toMillis();
        } catch (IOException e) {
            return 0;
        }
    }

    private static int indexOf(byte[] bytes, byte[] part) {
        outer:
        for (int i = 0; i + part.length <= bytes.length; i++) {
            for (int j = 0; j < part.length; j++) {
                if (bytes[i + j] != part[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }
}
