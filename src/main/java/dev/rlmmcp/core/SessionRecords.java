package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.llm.LlmLimits;
import dev.rlmmcp.store.StateStore;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The JSON form of a session's record and of its trace entries, as the state store keeps them. A
 * write to the store that fails is logged, and the session goes on.
 */
final class SessionRecords {

    private static final Logger log = LoggerFactory.getLogger(Session.class);

    private SessionRecords() {}

    static void save(StateStore store, ObjectMapper json, SessionRecord session) {
        try {
            String record = write(json, session);
            store.write("session " + session.id(), db -> db.save(session.id(), record));
        } catch (IOException e) {
            log.warn("session {} not written to the state store: {}", session.id(), e.getMessage());
        }
    }

    /**
     * Adds {@code entry} to the session's stored trace, with the session's record as it now is. Both
     * are immutable, so they are made JSON on the store's writer thread, off the step's reply path.
     */
    static void append(StateStore store, ObjectMapper json, SessionRecord session, Step entry) {
        String id = session.id();
        store.write("step " + entry.index() + " of session " + id, db -> {
            String stored;
            String record;
            try {
                stored = json.writeValueAsString(view(entry));
                record = write(json, session);
            } catch (IOException e) {
                log.warn("session {}: step {} not written to the state store: {}", id, entry.index(), e.getMessage());
                return;
            }
            db.append(id, record, entry.index(), stored, Trace.KEPT);
        });
    }

    /** The record of a session whose own record was never written: a default session, active now. */
    static String unrecorded(ObjectMapper json, String id, LlmLimits llmDefaults) throws IOException {
        Instant now = Instant.now();
        return write(
                json,
                new SessionRecord(
                        id,
                        Sessions.DEFAULT_NAME,
                        now,
                        now,
                        SessionState.ACTIVE,
                        null,
                        null,
                        0,
                        0,
                        0,
                        0,
                        0,
                        null,
                        Limits.NONE,
                        llmDefaults));
    }

    static String write(ObjectMapper json, SessionRecord s) throws IOException {
        ObjectNode r = json.createObjectNode();
        r.put("id", s.id());
        r.put("name", s.name());
        r.put("created", s.created().toString());
        r.put("last_active", s.lastActive().toString());
        r.put("state", s.state().name());
        r.put("guardrail_stop", s.stoppedBy());
        r.put("final_answer", s.finalAnswer());
        r.put("steps", s.steps());
        r.put("runtime_ms", s.runtimeMs());
        r.put("io_bytes", s.ioBytes());
        r.put("trace_length", s.traceLength());
        r.put("kernel_restarts", s.kernelRestarts());
        r.put("snapshot_at", s.snapshotAt() == null ? null : s.snapshotAt().toString());
        Limits limits = s.limits();
        ObjectNode l = r.putObject("limits");
        l.put("max_steps", limits.maxSteps());
        l.put("max_runtime_ms", limits.maxRuntimeMs());
        l.put("budget_bytes", limits.budgetBytes());
        l.put(
                "step_timeout_ms",
                limits.stepTimeout() == null ? null : limits.stepTimeout().toMillis());
        LlmLimits ll = s.llmLimits();
        ObjectNode lm = r.putObject("llm_limits");
        lm.put("max_calls_per_step", ll.maxCallsPerStep());
        lm.put("max_calls", ll.maxCalls());
        lm.put("max_concurrent", ll.maxConcurrent());
        lm.put("max_prompt_chars", ll.maxPromptChars());
        lm.put("token_budget", ll.tokenBudget());
        lm.put("call_timeout_ms", ll.callTimeout().toMillis());
        lm.put("max_depth", ll.maxDepth());
        return json.writeValueAsString(r);
    }

    /** The record stored for session {@code id}; limits on sub-LLM calls it lacks are {@code llmDefaults}. */
    static SessionRecord read(ObjectMapper json, String id, String stored, LlmLimits llmDefaults) throws IOException {
        JsonNode r = json.readTree(stored);
        JsonNode l = r.path("limits");
        Limits limits = new Limits(
                l.path("max_steps").isNumber() ? l.path("max_steps").asInt() : null,
                l.path("max_runtime_ms").isNumber() ? l.path("max_runtime_ms").asLong() : null,
                l.path("budget_bytes").isNumber() ? l.path("budget_bytes").asLong() : null,
                l.path("step_timeout_ms").isNumber()
                        ? Duration.ofMillis(l.path("step_timeout_ms").asLong())
                        : null);
        LlmLimits llmLimits = llmLimits(r.path("llm_limits"), llmDefaults);
        return new SessionRecord(
                id,
                r.path("name").asText("default"),
                Instant.parse(r.path("created").asText()),
                Instant.parse(r.path("last_active").asText()),
                SessionState.valueOf(r.path("state").asText("ACTIVE")),
                r.path("guardrail_stop").isTextual() ? r.path("guardrail_stop").asText() : null,
                r.path("final_answer").isTextual() ? r.path("final_answer").asText() : null,
                r.path("steps").asInt(),
                r.path("runtime_ms").asLong(),
                r.path("io_bytes").asLong(),
                r.path("trace_length").asInt(),
                r.path("kernel_restarts").asInt(),
                r.path("snapshot_at").isTextual()
                        ? Instant.parse(r.path("snapshot_at").asText())
                        : null,
                limits,
                llmLimits);
    }

    /** Limits on sub-LLM calls as stored (older records have none: the defaults). */
    private static LlmLimits llmLimits(JsonNode l, LlmLimits defaults) {
        if (!l.isObject()) {
            return defaults;
        }
        return new LlmLimits(
                l.path("max_calls_per_step").isNumber()
                        ? l.path("max_calls_per_step").asInt()
                        : null,
                l.path("max_calls").isNumber() ? l.path("max_calls").asInt() : null,
                l.path("max_concurrent").asInt(defaults.maxConcurrent()),
                l.path("max_prompt_chars").asInt(defaults.maxPromptChars()),
                l.path("token_budget").isNumber() ? l.path("token_budget").asLong() : null,
                l.path("call_timeout_ms").isNumber()
                        ? Duration.ofMillis(l.path("call_timeout_ms").asLong())
                        : defaults.callTimeout(),
                l.path("max_depth").asInt(defaults.maxDepth()));
    }

    /** A trace entry as stored and as rlm_get_trace shows it. */
    static Map<String, Object> view(Step step) {
        Map<String, Object> view = new LinkedHashMap<>();
        view.put("index", step.index());
        if (step.step() != null) {
            view.put("step", step.step());
        }
        view.put("kind", step.kind());
        view.put("at", step.at().toString());
        view.put("input", step.input());
        view.put("status", step.status());
        view.put("output", step.output());
        view.put("variables_changed", step.variablesChanged());
        view.put("duration_ms", step.durationMs());
        view.put("io_bytes", step.ioBytes());
        if (step.guardrail() != null) {
            view.put("guardrail_stop", step.guardrail());
        }
        view.put("memory_bytes", step.memoryBytes());
        if (step.llmUsage() != null) {
            view.put("llm_usage", step.llmUsage());
        }
        if (step.llmCalls() != null) {
            view.put("llm_calls", step.llmCalls());
        }
        if (step.rlm() != null) {
            view.put("rlm", step.rlm());
        }
        return view;
    }

    /** Stored trace entries as steps; an entry that is not JSON fails them all. */
    static List<Step> steps(ObjectMapper json, List<String> entries) {
        List<Step> steps = new ArrayList<>(entries.size());
        try {
            for (String entry : entries) {
                steps.add(step(json.readTree(entry)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return steps;
    }

    static Step step(JsonNode v) {
        List<String> changed = new ArrayList<>();
        v.path("variables_changed").forEach(n -> changed.add(n.asText()));
        return new Step(
                v.path("index").asInt(),
                v.path("step").isNumber() ? v.path("step").asInt() : null,
                v.path("kind").asText(),
                Instant.parse(v.path("at").asText()),
                v.path("input").asText(),
                v.path("status").asText(),
                v.path("output").asText(),
                List.copyOf(changed),
                v.path("duration_ms").asDouble(),
                v.path("io_bytes").asLong(),
                v.path("guardrail_stop").isTextual() ? v.path("guardrail_stop").asText() : null,
                v.path("memory_bytes").asLong(),
                v.get("llm_usage"),
                v.get("llm_calls"),
                v.get("rlm"));
    }
}
