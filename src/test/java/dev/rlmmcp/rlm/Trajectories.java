package dev.rlmmcp.rlm;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.JsonSerializer;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.module.SimpleModule;
import dev.rlmmcp.rlm.Trajectory.CodeRun;
import dev.rlmmcp.rlm.Trajectory.Iteration;
import dev.rlmmcp.rlm.Trajectory.Message;
import dev.rlmmcp.rlm.Trajectory.Node;
import dev.rlmmcp.rlm.Trajectory.SubCall;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * A run as the engine records it, for the tests of what reads trajectories: RLMs at depths 0, 1 and 2
 * (the root, two children started by rlm_query_batched, a grandchild under the first), a plain
 * llm_query at the bottom, one answered from the cache, and a code block that failed.
 */
public final class Trajectories {

    /** The server's mapping of the records, with instants as ISO text and durations in milliseconds. */
    public static final ObjectMapper JSON = new ObjectMapper().registerModule(new SimpleModule()
            .addSerializer(Instant.class, new JsonSerializer<>() {
                @Override
                public void serialize(Instant value, JsonGenerator gen, SerializerProvider p) throws IOException {
                    gen.writeString(value.toString());
                }
            })
            .addSerializer(Duration.class, new JsonSerializer<>() {
                @Override
                public void serialize(Duration value, JsonGenerator gen, SerializerProvider p) throws IOException {
                    gen.writeNumber(value.toMillis());
                }
            }));

    public static final String QUESTION = "Which region sold the most?";
    public static final String ANSWER = "east";
    static final Instant T0 = Instant.parse("2026-11-27T12:00:00Z");

    private Trajectories() {
    }

    public static JsonNode depthTwoTree() {
        return JSON.valueToTree(depthTwo());
    }

    public static Trajectory depthTwo() {
        Node grandchild = node("n3", 2, "Is 200 the largest of 120, 80, 200?", List.of(
                new Iteration(0, 0, 2, "Compare them.\n```repl\nverdict = llm_query('largest of 120, 80, 200?')\n"
                        + "answer['content'] = verdict; answer['ready'] = True\n```",
                        List.of(new CodeRun("verdict = llm_query('largest of 120, 80, 200?')\n"
                                + "answer['content'] = verdict; answer['ready'] = True", "", "", null, 3.5,
                                List.of("verdict"), List.of(new SubCall("llm", "largest of 120, 80, 200?", "200",
                                        null, "sub-model", 14, 2, 0.00001, 420, false, null)))),
                        "200", null, 310, 40, 0.0004, 900, T0.plusSeconds(3))),
                "200", 324, 42);
        Node first = node("n1", 1, "Best region in: north,120 south,80 east,200", List.of(
                new Iteration(0, 0, 2, "```repl\nrows = context.split()\nbest = rlm_query('Is 200 the largest of 120, 80, 200?')\n"
                        + "FINAL_VAR('best')\n```", List.of(new CodeRun("rows = context.split()\n"
                        + "best = rlm_query('Is 200 the largest of 120, 80, 200?')\nFINAL_VAR('best')", "", "", null, 1200,
                        List.of("rows", "best"), List.of(new SubCall("rlm", "Is 200 the largest of 120, 80, 200?", "200",
                                null, "root-model", 324, 42, 0.00041, 1190, false, grandchild)))),
                        "east (200)", null, 280, 60, 0.0005, 1500, T0.plusSeconds(2))),
                "east (200)", 604, 102);
        Node second = node("n2", 1, "Best region in: west,45", List.of(
                new Iteration(0, 0, 2, "```repl\nprint(int('x'))\n```", List.of(new CodeRun("print(int('x'))", "", "",
                        "ValueError: invalid literal for int() with base 10: 'x'", 2.1, List.of(), List.of())),
                        null, null, 250, 20, 0.0003, 700, T0.plusSeconds(2)),
                new Iteration(1, 0, 4, "```repl\nanswer['content'] = 'west (45)'; answer['ready'] = True\n```",
                        List.of(new CodeRun("answer['content'] = 'west (45)'; answer['ready'] = True", "", "", null, 1.0,
                                List.of(), List.of())), "west (45)", null, 300, 25, 0.0003, 650, T0.plusSeconds(3))),
                "west (45)", 550, 45);
        List<Message> rootMessages = List.of(new Message("system", "You are a Recursive Language Model."),
                new Message("user", "Question: " + QUESTION + "\nThe variable `context` holds a str of length 37."),
                new Message("assistant", "Split the context and ask a child per half."),
                new Message("user", "REPL output:\n['east (200)', 'west (45)']"));
        String batch = "halves = ['north,120 south,80 east,200', 'west,45']\n"
                + "best = rlm_query_batched(['Best region in: ' + h for h in halves], halves)\n"
                + "check = llm_query('say ok')\ncheck2 = llm_query('say ok')\nprint(best)";
        Node root = new Node("n0", 0, QUESTION, "root-model", "str of length 37", rootMessages, List.of(
                new Iteration(0, 0, 2, "Split the context and ask a child per half.\n```repl\n" + batch + "\n```",
                        List.of(new CodeRun(batch, "['east (200)', 'west (45)']\n", "", null, 2500,
                                List.of("halves", "best", "check", "check2"), List.of(
                                        new SubCall("rlm", "Best region in: north,120 south,80 east,200", "east (200)",
                                                null, "root-model", 604, 102, 0.00091, 2400, false, first),
                                        new SubCall("rlm", "Best region in: west,45", "west (45)", null, "root-model",
                                                550, 45, 0.0006, 1400, false, second),
                                        new SubCall("llm", "say ok", "ok", null, "sub-model", 3, 1, 0.000001, 80, false,
                                                null),
                                        new SubCall("llm", "say ok", "ok", null, "sub-model", 0, 0, 0.0, 0.2, true,
                                                null)))),
                        null, null, 400, 90, 0.0009, 3100, T0),
                new Iteration(1, 0, 4, "```repl\nanswer['content'] = 'east'; answer['ready'] = True\n```",
                        List.of(new CodeRun("answer['content'] = 'east'; answer['ready'] = True", "", "", null, 0.8,
                                List.of(), List.of())), ANSWER, null, 520, 30, 0.0006, 800, T0.plusSeconds(4))),
                ANSWER, true, null, 2500, 390, 0.0033, 4100, T0);
        RunOutcome outcome = new RunOutcome("run-7", ANSWER, true, null, null,
                new RunFigures(7, 3, 0, 2, 2500, 390, 0.0033, 1, 2, 4100));
        return new Trajectory("run-7", QUESTION, "root-model", "openai", new RunLimits(3, 30, 256,
                Duration.ofMinutes(30), null, null, 1.0, 5, 20_000, 0.85, 8), T0, outcome, root);
    }

    private static Node node(String id, int depth, String prompt, List<Iteration> iterations, String answer, long in,
            long out) {
        List<Message> messages = List.of(new Message("system", "You are a Recursive Language Model."),
                new Message("user", "Question: " + prompt), new Message("assistant", "working"),
                new Message("user", "REPL output:\n"));
        return new Node(id, depth, prompt, "root-model", "str of length 20", messages, iterations, answer, true, null, in,
                out, 0.001, iterations.stream().mapToDouble(Iteration::ms).sum(), T0.plusSeconds(1));
    }
}
