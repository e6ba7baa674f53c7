package dev.rlmmcp.e2e.support;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The task of the agent-backend tests: an application log of a fleet of hosts, several directories deep under
 * the data root, and one step whose code asks the sub-LLM about it with no API configured, so that the agent
 * itself answers: {@code llm_query_batched} over 8 chunks (how many lines of each contain ERROR), then one
 * {@code rlm_query} whose child session counts the distinct hosts of a list it gets as its {@code context}.
 * It also holds what the scripted models do with the replies, as a model would: read the pending requests'
 * ids (and an {@code rlm} request's child session) from the text, and count the ERROR lines of a prompt it
 * has read.
 *
 * @param lines     the file's lines
 * @param chunks    {@code lines[i::8]} for i in 0..7, as the step's code cuts them
 * @param errors    lines with ERROR in each chunk
 * @param hosts     distinct hosts in the file
 */
public record SubCallsTask(List<String> lines, List<List<String>> chunks, List<Integer> errors, int hosts) {

    /** Where the log is, under the data root. */
    public static final String PATH = "var/log/fleet/2026/12/07/app.log";

    public static final int CHUNKS = 8;

    /** The step: 8 llm sub-calls in one batch, then one child RLM; its last line is what the test checks. */
    public static final String STEP = """
            parts = [log[i::8] for i in range(8)]
            counts = llm_query_batched(["How many of these log lines contain ERROR? Answer with the number only.\\n"
                                        + "\\n".join(p) for p in parts])
            total = sum(int(c) for c in counts)
            hosts = [line.split()[1] for line in log]
            detail = rlm_query("Count the distinct hosts in context and answer with the number only", context=hosts)
            print("RESULT", total, detail, [int(c) for c in counts])""";

    /** What the model runs in the child session: the answer, computed from {@code context}, kept in a variable. */
    public static final String CHILD_CODE =
            "result = str(len(set(context)))\nprint(type(context).__name__, len(context), result)";

    /** The pending requests of a reply: {@code - q3 llm 2,417 chars: ...}, {@code - q9 rlm ..., child session s-...}. */
    private static final Pattern PENDING = Pattern.compile("(?m)^\\s*[-*]\\s+`?(q\\d+)`?\\s+(llm|rlm)\\b([^\\n]*)$");

    private static final Pattern CHILD = Pattern.compile("child session (s-[0-9a-f]+)");
    private static final Pattern SESSION = Pattern.compile("session_id=\\\\?\"(s-[0-9a-f]+)");
    private static final Pattern LOG_LINE = Pattern.compile("(?m)^2026-12-07T\\S+ host-\\d+ .*$");

    /** One request a suspended step waits for, as the reply lists it. */
    public record Pending(String id, String kind, String childSession) {}

    /** Writes the log (400 lines, 13 hosts, a fixed seed) and what a correct answer finds in it. */
    public static SubCallsTask write(Path file) throws IOException {
        Random random = new Random(38);
        List<String> lines = new ArrayList<>();
        String[] levels = {"INFO", "INFO", "INFO", "WARN", "ERROR"};
        String[] events = {
            "payment gateway timeout",
            "cache miss for order",
            "disk usage above threshold",
            "request served",
            "retrying upstream call",
            "connection reset by peer"
        };
        Set<String> hosts = new TreeSet<>();
        for (int i = 0; i < 400; i++) {
            String host = "host-%02d".formatted(1 + random.nextInt(13));
            hosts.add(host);
            String level = levels[random.nextInt(levels.length)];
            lines.add("2026-12-07T03:%02d:%02dZ %s %s %s id=%d"
                    .formatted(i / 60, i % 60, host, level, events[random.nextInt(events.length)], 10_000 + i));
        }
        Files.createDirectories(file.getParent());
        Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.US_ASCII);
        List<List<String>> chunks = new ArrayList<>();
        List<Integer> errors = new ArrayList<>();
        for (int c = 0; c < CHUNKS; c++) {
            List<String> chunk = new ArrayList<>();
            for (int i = c; i < lines.size(); i += CHUNKS) {
                chunk.add(lines.get(i));
            }
            chunks.add(chunk);
            errors.add(errorLines(String.join("\n", chunk)));
        }
        return new SubCallsTask(List.copyOf(lines), List.copyOf(chunks), List.copyOf(errors), hosts.size());
    }

    public int totalErrors() {
        return errors.stream().mapToInt(Integer::intValue).sum();
    }

    /** The line the step prints at its end when every sub-call got the right answer. */
    public String resultLine() {
        return "RESULT " + totalErrors() + " " + hosts + " " + errors;
    }

    /** The pending requests a reply lists, in order, by id. */
    public static Map<String, Pending> pending(String reply) {
        Map<String, Pending> out = new LinkedHashMap<>();
        Matcher m = PENDING.matcher(reply);
        while (m.find()) {
            Matcher child = CHILD.matcher(m.group(3));
            out.putIfAbsent(m.group(1), new Pending(m.group(1), m.group(2), child.find() ? child.group(1) : null));
        }
        return out;
    }

    /** The session a suspended reply tells the model to answer in ({@code rlm_answer(session_id="s-...")}). */
    public static String answerSession(String reply) {
        Matcher m = SESSION.matcher(reply);
        if (!m.find()) {
            throw new AssertionError("no session_id=\"s-...\" in the reply:\n" + reply);
        }
        return m.group(1);
    }

    /** What the model answers to a prompt it has read: the number of its log lines with ERROR in them. */
    public static int errorLines(String prompt) {
        int n = 0;
        Matcher m = LOG_LINE.matcher(prompt);
        while (m.find()) {
            if (m.group().contains(" ERROR ")) {
                n++;
            }
        }
        return n;
    }

    /** The log lines a text holds (a prompt as the model read it). */
    public static List<String> logLines(String text) {
        List<String> out = new ArrayList<>();
        Matcher m = LOG_LINE.matcher(text);
        while (m.find()) {
            out.add(m.group());
        }
        return out;
    }

    /** Which chunk a prompt holds whole (its index), or -1 when it holds none exactly. */
    public int chunkOf(String prompt) {
        return chunks.indexOf(logLines(prompt));
    }
}
