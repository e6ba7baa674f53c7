package dev.rlmmcp.rlm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.CallbackRefused;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.HostCallbacks;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.llm.LlmException;
import dev.rlmmcp.llm.LlmMessage;
import dev.rlmmcp.llm.LlmRequest;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.function.Consumer;

/**
 * The rlm_query and rlm_query_batched calls of one code block (kernel callbacks of kind "rlm"): each
 * prompt a child RLM in a kernel of its own, with the context its parent handed over as {@code
 * context}, run in parallel (bounded), its kernel freed when it answers. At the depth limit the kernel
 * is told to make the call an llm_query instead. A failed child is an error in its place, never a failed batch. Other kinds
 * of request go to {@code others}. Closing deletes the contexts handed over.
 */
final class ChildRuns implements HostCallbacks, AutoCloseable {

    /** Contexts up to this size are digested to answer identical calls from the cache. */
    private static final long DIGESTED = 64L << 20;
    /** How long closing waits for children to free their kernels. */
    private static final java.time.Duration CLOSE_WAIT = java.time.Duration.ofSeconds(5);

    private final RlmRuns.Env env;
    private final Run run;
    private final RlmLoop parentLoop;
    private final Session parent;
    private final int depth;
    private final String model;
    private final Consumer<Trajectory.SubCall> recorder;
    private final HostCallbacks others;
    private final ContextFiles files;
    private final Set<RlmLoop> running = ConcurrentHashMap.newKeySet();
    /** Children getting their kernel (it may wait for a place): interrupted to stop them. */
    private final Set<Thread> starting = ConcurrentHashMap.newKeySet();
    /** Children started and not yet ended (their kernels not yet freed). */
    private int active;

    private int started;

    ChildRuns(
            RlmRuns.Env env,
            Run run,
            RlmLoop parentLoop,
            Session parent,
            int depth,
            String model,
            Consumer<Trajectory.SubCall> recorder,
            HostCallbacks others) {
        this.env = env;
        this.run = run;
        this.parentLoop = parentLoop;
        this.parent = parent;
        this.depth = depth;
        this.model = model;
        this.recorder = recorder;
        this.others = others;
        this.files = new ContextFiles(parent.writableDir());
    }

    @Override
    public JsonNode handle(String kind, JsonNode request) throws CallbackRefused, InterruptedException {
        if (!"rlm".equals(kind)) {
            return others.handle(kind, request);
        }
        JsonNode prompts = request.path("prompts");
        JsonNode contexts = request.path("contexts");
        String asked = request.path("model").isTextual() ? request.path("model").asText() : model;
        Integer maxIterations = request.path("max_iterations").isIntegralNumber()
                ? request.path("max_iterations").asInt()
                : null;
        int concurrency = Math.max(
                1,
                Math.min(
                        run.limits.concurrency(),
                        request.path("concurrency").isIntegralNumber()
                                ? request.path("concurrency").asInt()
                                : run.limits.concurrency()));
        if (!prompts.isArray() || prompts.isEmpty()) {
            throw new CallbackRefused("INVALID_ARGUMENT", "prompts must be a non-empty list of str");
        }
        if (depth + 1 >= run.limits.maxDepth()) {
            return atDepthLimit();
        }
        return answered(env, request, runAll(prompts, contexts, asked, maxIterations, concurrency));
    }

    /** The callback's answer: each answer in its place, or, for a single rlm_query that failed, its error. */
    static JsonNode answered(RlmRuns.Env env, JsonNode request, List<ObjectNode> answers) throws CallbackRefused {
        if (!request.path("batched").asBoolean() && answers.getFirst().has("error")) {
            JsonNode error = answers.getFirst().path("error");
            throw new CallbackRefused(
                    error.path("code").asText(), error.path("message").asText());
        }
        ObjectNode reply = env.json().createObjectNode();
        reply.putArray("answers").addAll(answers);
        return reply;
    }

    private List<ObjectNode> runAll(
            JsonNode prompts, JsonNode contexts, String asked, Integer maxIterations, int concurrency)
            throws InterruptedException {
        Semaphore slots = new Semaphore(concurrency, true);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<ObjectNode>> futures = new ArrayList<>();
            for (int i = 0; i < prompts.size(); i++) {
                String prompt = prompts.get(i).asText();
                JsonNode context = contexts.isArray() && i < contexts.size() ? contexts.get(i) : null;
                futures.add(threads.submit(() -> {
                    slots.acquire();
                    try {
                        return one(prompt, context == null || context.isNull() ? null : context, asked, maxIterations);
                    } finally {
                        slots.release();
                    }
                }));
            }
            List<ObjectNode> answers = new ArrayList<>();
            try {
                for (Future<ObjectNode> f : futures) {
                    answers.add(f.get());
                }
            } catch (InterruptedException e) {
                running.forEach(RlmLoop::cancel);
                starting.forEach(Thread::interrupt);
                threads.shutdownNow();
                throw e;
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            }
            return answers;
        }
    }

    private ObjectNode one(String prompt, JsonNode context, String asked, Integer maxIterations)
            throws InterruptedException {
        try {
            return text(child(prompt, context, asked, maxIterations));
        } catch (ChildFailed e) {
            return error(e.code, e.getMessage());
        } catch (RuntimeException e) {
            return error("INTERNAL_ERROR", "the child RLM failed on the server: " + e);
        }
    }

    /**
     * rlm_query at the depth limit: the kernel is told to make it an llm_query of the prompt with the
     * context's value as text (only the kernel can render the value), so that it meets llm_query's
     * checks (prompt size, calls per step, the model's window) and is counted as one.
     */
    private ObjectNode atDepthLimit() {
        return env.json().createObjectNode().put("depth_limit", true);
    }

    private String child(String prompt, JsonNode context, String asked, Integer maxIterations)
            throws InterruptedException, ChildFailed {
        Path file = null;
        byte[] inline = null;
        try {
            if (context != null && context.path("file").isTextual()) {
                file = files.take(context.path("file").asText());
            } else if (context != null && context.path("inline").isTextual()) {
                inline = Base64.getDecoder().decode(context.path("inline").asText());
            }
        } catch (IOException | IllegalArgumentException e) {
            throw new ChildFailed("CONTEXT_UNREADABLE", "the context could not be handed over: " + e.getMessage());
        }
        String digest = digest(file, inline);
        SubCallCache.Key key = digest == null
                ? null
                : new SubCallCache.Key("rlm", asked, null, List.of(prompt), String.valueOf(maxIterations), digest);
        long t0 = System.nanoTime();
        Path from = file;
        byte[] bytes = inline;
        if (key == null) {
            return answerOf(start(prompt, context, from, bytes, asked, maxIterations));
        }
        boolean[] hit = {false};
        Trajectory.Node node;
        try {
            node = run.cache.get(key, () -> start(prompt, context, from, bytes, asked, maxIterations), () -> {
                hit[0] = true;
                run.cacheHit();
            });
        } catch (InterruptedException | ChildFailed | RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
        if (hit[0]) {
            recorder.accept(new Trajectory.SubCall(
                    "rlm",
                    prompt,
                    node.answer(),
                    null,
                    asked,
                    0,
                    0,
                    null,
                    Math.round((System.nanoTime() - t0) / 1e4) / 100.0,
                    true,
                    null));
        }
        return answerOf(node);
    }

    private Trajectory.Node start(
            String prompt, JsonNode context, Path file, byte[] inline, String asked, Integer maxIterations)
            throws InterruptedException, ChildFailed {
        String info = file != null || inline != null ? describe("The variable `context`", context) : null;
        fits(prompt, info, asked);
        placeLeft();
        admit();
        long t0 = System.nanoTime();
        String id = parentLoop != null ? parentLoop.nextChildId() : "child-" + (++started);
        Trajectory.Node node;
        synchronized (this) {
            active++;
        }
        starting.add(Thread.currentThread());
        Session child = env.sessions().scratch(parent, run.timeLeft(null));
        try {
            child.beginLoop();
            if (info != null) {
                load(child, file, inline);
            }
            RlmLoop loop = new RlmLoop(env, run, child, id, depth + 1, prompt, asked, info, maxIterations);
            running.add(loop);
            starting.remove(Thread.currentThread());
            try {
                node = loop.run();
            } finally {
                running.remove(loop);
            }
        } catch (RlmException e) {
            throw new ChildFailed(e.code().name(), "the child RLM could not run: " + whyNot(e));
        } finally {
            starting.remove(Thread.currentThread());
            child.close();
            run.childEnded();
            synchronized (this) {
                active--;
                notifyAll();
            }
            run.changed(0, depth + 1);
        }
        recordChild(prompt, asked, node, t0);
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedException("the child's parent stopped");
        }
        return node;
    }

    /**
     * Refuses a child whose first message cannot fit its model's context window: no turn of it could be
     * sent, so it fails once, before it takes a kernel.
     */
    private void fits(String prompt, String info, String asked) throws ChildFailed {
        LlmRequest opening = new LlmRequest(
                List.of(LlmMessage.user(LoopPrompt.first(prompt, info))),
                LoopPrompt.system(run.limits.outputCap(), depth + 2 < run.limits.maxDepth()),
                null,
                asked);
        try {
            ContextWindow.check(run.config, opening, asked);
        } catch (LlmException e) {
            throw new ChildFailed(e.code(), "the child RLM's first message cannot be sent: " + e.getMessage());
        }
    }

    /**
     * Refuses a child whose ancestors hold every kernel place: each of them waits for its child, so no
     * place would ever come free for it.
     */
    private void placeLeft() throws ChildFailed {
        int places = parent.kernelPlaces();
        int ancestors = depth + 1;
        if (ancestors >= places) {
            throw new ChildFailed(
                    "CAPACITY",
                    ("the child RLM at depth %d cannot get a kernel: its %d ancestors hold all %d places that "
                                    + "--max-kernels (RLM_MAX_KERNELS) allows, each waiting for its child. Raise "
                                    + "--max-kernels above %d, or pass max_depth %d so that rlm_query at this depth is "
                                    + "an llm_query")
                            .formatted(depth + 1, ancestors, places, ancestors, depth + 1));
        }
    }

    /** What a child that could not start met; a wait for a kernel place cut by the run's time says so. */
    private String whyNot(RlmException e) {
        if (e.code() == dev.rlmmcp.base.ErrorCode.CAPACITY && run.stopped() == StopReason.MAX_TIME) {
            return "no kernel place came free within the run's time: " + run.stopMessage() + " (" + e.getMessage()
                    + ")";
        }
        return e.getMessage();
    }

    /** Counts a child in against the run's limits; refused once the run has stopped or a limit is reached. */
    private void admit() throws ChildFailed {
        if (!run.admitChild(depth + 1)) {
            StopReason why = run.stopped();
            throw new ChildFailed(
                    "LIMIT_EXCEEDED",
                    "no child RLM started: " + (why == null ? "the run has stopped" : run.stopMessage()));
        }
    }

    /** Records a child that ran as a sub-call of its parent's block, its node nested in it. */
    private void recordChild(String prompt, String asked, Trajectory.Node node, long t0) {
        recorder.accept(new Trajectory.SubCall(
                "rlm",
                prompt,
                node.answer(),
                node.answer() == null ? "no answer: " + node.stoppedBy() : null,
                asked,
                node.inputTokens(),
                node.outputTokens(),
                node.costUsd(),
                Math.round((System.nanoTime() - t0) / 1e4) / 100.0,
                false,
                node));
    }

    static void load(Session child, Path file, byte[] inline) throws ChildFailed {
        try {
            if (file != null) {
                child.loadPickle("context", file, CallContext.NONE);
            } else {
                InputStream in = new ByteArrayInputStream(inline);
                child.loadStream(
                        "context",
                        DataType.PICKLE,
                        new Download(in, inline.length, "context", null),
                        "context",
                        "rlm_query context",
                        CallContext.NONE);
            }
        } catch (IOException e) {
            throw new ChildFailed("CONTEXT_UNREADABLE", "the context could not be read: " + e.getMessage());
        } catch (RlmException e) {
            throw new ChildFailed("CONTEXT_NOT_LOADED", "the child could not load the context: " + e.getMessage());
        }
    }

    private static String answerOf(Trajectory.Node node) throws ChildFailed {
        if (node.answer() != null) {
            return node.answer();
        }
        String why = node.stoppedBy() == null ? "it stopped" : node.stoppedBy();
        String last =
                node.iterations().isEmpty() ? null : node.iterations().getLast().note();
        throw new ChildFailed(
                why.startsWith("error") ? "CHILD_FAILED" : "NO_ANSWER",
                "the child RLM ended without an answer (" + why + ")"
                        + (last == null ? "" : "; its last turn: " + last));
    }

    /** What the parent's kernel said of a context it handed over: type, length and preview. */
    private static String describe(String subject, JsonNode context) {
        return LoopPrompt.describe(
                subject,
                context.path("type").asText("object"),
                context.path("length").isIntegralNumber()
                        ? context.path("length").asLong()
                        : null,
                context.path("preview").asText(null));
    }

    private static String digest(Path file, byte[] inline) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            if (inline != null) {
                sha.update(inline);
            } else if (file != null) {
                if (Files.size(file) > DIGESTED) {
                    return null;
                }
                try (InputStream in = Files.newInputStream(file)) {
                    byte[] buf = new byte[1 << 16];
                    for (int n; (n = in.read(buf)) > 0; ) {
                        sha.update(buf, 0, n);
                    }
                }
            } else {
                return "none";
            }
            return HexFormat.of().formatHex(sha.digest());
        } catch (IOException | NoSuchAlgorithmException e) {
            return null;
        }
    }

    private ObjectNode text(String text) {
        return env.json().createObjectNode().put("text", text);
    }

    private ObjectNode error(String code, String message) {
        ObjectNode answer = env.json().createObjectNode();
        answer.putObject("error").put("code", code).put("message", message);
        return answer;
    }

    /**
     * Stops the children still running (their code's step ended without waiting for them) and waits,
     * a little, until each has freed its kernel.
     */
    @Override
    public void close() {
        running.forEach(RlmLoop::cancel);
        starting.forEach(Thread::interrupt);
        long deadline = System.nanoTime() + CLOSE_WAIT.toNanos();
        synchronized (this) {
            while (active > 0 && System.nanoTime() < deadline) {
                running.forEach(RlmLoop::cancel);
                try {
                    wait(Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    break;
                }
            }
        }
        files.close();
    }

    /** A child that could not give an answer: the code and message its caller sees. */
    static final class ChildFailed extends Exception {
        final String code;

        ChildFailed(String code, String message) {
            super(message);
            this.code = code;
        }
    }
}
