package dev.rlmmcp.llm;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.channel.CallbackDepth;
import dev.rlmmcp.kernel.channel.CallbackException;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The sub-LLM calls of one step: the kernel's "llm" callbacks ({@code {prompts, system, max_tokens,
 * model, concurrency, batched}}), checked against the limits, run in parallel (bounded), and
 * counted. Answers: {@code {answers: [{text} | {error: {code, message}}]}}, in the prompts' order.
 */
public final class LlmStep implements KernelCallbacks {

    private static final int EVENTS_KEPT = 20;
    private static final int CALLS_KEPT = 100;
    private static final int CALL_TEXT_KEPT = 4_000;

    private final LlmAccount account;
    private final LlmLimits limits;
    private final LlmBackend backend;
    /** Why llm_query is refused here (no backend), or null. */
    private final String unavailable;
    /** The depth of the RLM whose code makes these calls, or null for an agent's own step. */
    private final Integer depth;

    private final ObjectMapper json;
    private final Semaphore concurrent;
    private int admitted;
    private int calls;
    private int failed;
    private int refused;
    private long inputTokens;
    private long outputTokens;
    private boolean estimated;
    private double latencyTotalMs;
    private double latencyMaxMs;
    private int inFlight;
    private int peakInFlight;
    private final List<LlmUsage.GuardrailEvent> events = new ArrayList<>();
    private final List<ObjectNode> log = new ArrayList<>();

    LlmStep(LlmAccount account, Object backend, Integer depth, ObjectMapper json) {
        this.depth = depth;
        this.account = account;
        this.limits = account.limits();
        this.backend = backend instanceof LlmBackend b ? b : null;
        this.unavailable = backend instanceof String why ? why : null;
        this.json = json;
        this.concurrent = new Semaphore(limits.maxConcurrent(), true);
    }

    @Override
    public JsonNode handle(String kind, JsonNode request) throws CallbackException, InterruptedException {
        List<LlmRequest> prompts;
        int concurrency;
        try {
            prompts = parse(request);
            concurrency = Math.min(
                    limits.maxConcurrent(),
                    Math.max(1, request.path("concurrency").asInt(limits.maxConcurrent())));
            admit(prompts);
        } catch (LlmException e) {
            refusal(e);
            throw new CallbackException(e.code(), e.getMessage());
        }
        List<ObjectNode> answers = backend instanceof AgentBackend agent
                ? askAgent(prompts, agent, request.path("printed").asText(null))
                : runAll(prompts, concurrency);
        if (!request.path("batched").asBoolean() && answers.getFirst().has("error")) {
            JsonNode error = answers.getFirst().path("error");
            throw new CallbackException(
                    error.path("code").asText(), error.path("message").asText());
        }
        ObjectNode reply = json.createObjectNode();
        reply.putArray("answers").addAll(answers);
        return reply;
    }

    private List<LlmRequest> parse(JsonNode request) throws LlmException {
        if (unavailable != null) {
            throw new LlmException("NOT_CONFIGURED", unavailable);
        }
        // in an RLM run the run's own depth limit decides (its RLMs are all above it); else the nesting of callbacks
        if (depth == null && CallbackDepth.current() > limits.maxDepth()) {
            throw new LlmException(
                    "DEPTH_LIMIT",
                    "llm_max_depth",
                    "sub-LLM calls nest at most %d deep here (llm_max_depth)".formatted(limits.maxDepth()));
        }
        String system =
                request.path("system").isTextual() ? request.path("system").asText() : null;
        Integer maxTokens = request.path("max_tokens").isIntegralNumber()
                ? request.path("max_tokens").asInt()
                : null;
        String model = request.path("model").isTextual() ? request.path("model").asText() : null;
        List<LlmRequest> prompts = new ArrayList<>();
        for (JsonNode p : request.path("prompts")) {
            LlmRequest one = new LlmRequest(p.asText(), system, maxTokens, model);
            if (one.chars() > limits.maxPromptChars()) {
                throw new LlmException(
                        "PROMPT_TOO_LARGE",
                        "llm_max_prompt_chars",
                        "prompt %d has %d characters (system prompt included), more than llm_max_prompt_chars %d: send a smaller chunk"
                                .formatted(prompts.size(), one.chars(), limits.maxPromptChars()));
            }
            prompts.add(one);
        }
        return prompts;
    }

    private void admit(List<LlmRequest> prompts) throws LlmException {
        synchronized (this) {
            if (limits.maxCallsPerStep() != null && admitted + prompts.size() > limits.maxCallsPerStep()) {
                throw new LlmException(
                        "LIMIT_EXCEEDED",
                        "llm_max_calls_per_step",
                        "a step may make %d sub-LLM calls (llm_max_calls_per_step); %d made, %d more asked"
                                .formatted(limits.maxCallsPerStep(), admitted, prompts.size()));
            }
            account.admit(prompts.size());
            admitted += prompts.size();
        }
    }

    private List<ObjectNode> runAll(List<LlmRequest> prompts, int concurrency) throws InterruptedException {
        Semaphore batch = new Semaphore(concurrency, true);
        try (ExecutorService threads = Executors.newVirtualThreadPerTaskExecutor()) {
            List<Future<ObjectNode>> futures = new ArrayList<>();
            for (LlmRequest prompt : prompts) {
                futures.add(threads.submit(() -> {
                    batch.acquire();
                    try {
                        concurrent.acquire();
                        try {
                            return one(prompt, threads);
                        } finally {
                            concurrent.release();
                        }
                    } finally {
                        batch.release();
                    }
                }));
            }
            List<ObjectNode> answers = new ArrayList<>();
            try {
                for (Future<ObjectNode> f : futures) {
                    answers.add(f.get());
                }
            } catch (InterruptedException e) {
                threads.shutdownNow();
                throw e;
            } catch (ExecutionException e) {
                throw new IllegalStateException(e.getCause());
            }
            return answers;
        }
    }

    /** Whether the calling agent answers these calls (the step's clock stands still while it waits for it). */
    public boolean answeredByAgent() {
        return backend instanceof AgentBackend;
    }

    /** The whole batch asked of the agent at once, then each answer awaited in turn. */
    private List<ObjectNode> askAgent(List<LlmRequest> prompts, AgentBackend agent, String printed)
            throws InterruptedException {
        List<PendingCalls.Ticket> tickets = agent.ask(
                "llm",
                prompts.stream()
                        .map(p -> new PendingCalls.Asked(p.prompt(), p.system(), null))
                        .toList(),
                printed);
        List<ObjectNode> answers = new ArrayList<>();
        try {
            for (int i = 0; i < tickets.size(); i++) {
                LlmRequest request = prompts.get(i);
                long started = System.nanoTime();
                started();
                try {
                    String text = agent.await(tickets.get(i), null);
                    finished(request, new LlmAnswer(text, null, null, "agent"), started);
                    answers.add(json.createObjectNode().put("text", text));
                } catch (LlmException e) {
                    answers.add(failed(request, started, e));
                }
            }
        } finally {
            agent.dropAll(tickets);
        }
        return answers;
    }

    private ObjectNode one(LlmRequest request, ExecutorService threads) throws InterruptedException {
        long started = System.nanoTime();
        started();
        Future<LlmAnswer> call = threads.submit(() -> backend.complete(request, limits.callTimeout()));
        try {
            LlmAnswer answer = call.get(limits.callTimeout().toMillis() + 1000, TimeUnit.MILLISECONDS);
            finished(request, answer, started);
            return json.createObjectNode().put("text", answer.text());
        } catch (TimeoutException e) {
            call.cancel(true);
            return failed(request, started, timedOut());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof LlmException failure) {
                return failed(request, started, failure.code().equals("TIMEOUT") ? timedOut() : failure);
            }
            return failed(
                    request,
                    started,
                    new LlmException("BACKEND_ERROR", "the " + backend.name() + " backend failed: " + e.getCause()));
        } catch (InterruptedException e) {
            call.cancel(true);
            throw e;
        }
    }

    private LlmException timedOut() {
        return new LlmException(
                "TIMEOUT",
                "llm_timeout_s",
                "the %s backend did not answer within llm_timeout_s (%d s)"
                        .formatted(backend.name(), limits.callTimeout().toSeconds()));
    }

    private synchronized void started() {
        inFlight++;
        peakInFlight = Math.max(peakInFlight, inFlight);
    }

    private void finished(LlmRequest request, LlmAnswer answer, long started) {
        long in = answer.inputTokens() != null ? answer.inputTokens() : estimate(request.chars());
        long out = answer.outputTokens() != null
                ? answer.outputTokens()
                : estimate(answer.text().length());
        account.used(in + out);
        synchronized (this) {
            inFlight--;
            calls++;
            inputTokens += in;
            outputTokens += out;
            estimated |= answer.inputTokens() == null || answer.outputTokens() == null;
            double ms = latency(started);
            ObjectNode entry = logged(request, ms);
            if (entry != null) {
                entry.put("answer", clip(answer.text()))
                        .put("input_tokens", in)
                        .put("output_tokens", out)
                        .put("tokens", in + out);
                if (answer.inputTokens() == null || answer.outputTokens() == null) {
                    entry.put("tokens_estimated", true);
                }
            }
        }
    }

    private ObjectNode failed(LlmRequest request, long started, LlmException failure) {
        synchronized (this) {
            inFlight--;
            calls++;
            failed++;
            ObjectNode entry = logged(request, latency(started));
            if (entry != null) {
                entry.put("error", failure.code() + ": " + failure.getMessage());
            }
            if (failure.limit() != null) {
                event(failure);
            }
        }
        ObjectNode answer = json.createObjectNode();
        answer.putObject("error").put("code", failure.code()).put("message", failure.getMessage());
        return answer;
    }

    private double latency(long started) {
        double ms = (System.nanoTime() - started) / 1e6;
        latencyTotalMs += ms;
        latencyMaxMs = Math.max(latencyMaxMs, ms);
        return ms;
    }

    private ObjectNode logged(LlmRequest request, double ms) {
        if (log.size() == CALLS_KEPT) {
            return null;
        }
        ObjectNode entry = json.createObjectNode().put("prompt", clip(request.prompt()));
        if (request.system() != null) {
            entry.put("system", clip(request.system()));
        }
        entry.put("latency_ms", Math.round(ms * 10) / 10.0);
        log.add(entry);
        return entry;
    }

    private static String clip(String text) {
        return text.length() <= CALL_TEXT_KEPT
                ? text
                : text.substring(0, CALL_TEXT_KEPT) + "… [" + (text.length() - CALL_TEXT_KEPT) + " more characters]";
    }

    /** This step's sub-LLM calls, each with its prompt and answer (clipped), tokens and latency: for the trace. */
    public synchronized ArrayNode calls() {
        ArrayNode list = json.createArrayNode();
        log.forEach(list::add);
        return list;
    }

    private synchronized void refusal(LlmException e) {
        refused++;
        if (e.limit() != null) {
            event(e);
        }
    }

    private void event(LlmException e) {
        if (events.size() < EVENTS_KEPT) {
            events.add(new LlmUsage.GuardrailEvent(e.limit(), e.code(), e.getMessage()));
        }
    }

    private static long estimate(int chars) {
        return (chars + 3) / 4;
    }

    /** What this step's sub-LLM calls used, or null if it made none and none was refused. */
    public synchronized LlmUsage usage() {
        if (calls == 0 && refused == 0) {
            return null;
        }
        return new LlmUsage(
                backend == null ? "none" : backend.name(),
                calls,
                failed,
                refused,
                inputTokens,
                outputTokens,
                estimated ? Boolean.TRUE : null,
                Math.round(latencyTotalMs * 10) / 10.0,
                Math.round(latencyMaxMs * 10) / 10.0,
                peakInFlight,
                account.calls(),
                account.tokens(),
                events.isEmpty() ? null : List.copyOf(events));
    }

    /** The guardrails this step's calls ran into, by name, in order. */
    public synchronized List<String> guardrails() {
        return events.stream().map(LlmUsage.GuardrailEvent::guardrail).toList();
    }
}
