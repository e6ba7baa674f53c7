package dev.rlmmcp.e2e.support;

import static dev.rlmmcp.e2e.support.McpDriver.json;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.TreeMap;

/** Session tools as an end-to-end test calls them through one client: a refusal fails the test. */
public final class SessionCalls {

    private final McpDriver client;

    public SessionCalls(McpDriver client) {
        this.client = client;
    }

    public JsonNode ok(String tool, Map<String, ?> args) {
        JsonNode result = client.call(tool, args);
        assertThat(result.path("isError").asBoolean())
                .as("%s %s -> %s", tool, args, result)
                .isFalse();
        return json(result);
    }

    /** The step's stdout; the step must not have raised. */
    public String run(String id, String code) {
        JsonNode reply = ok("rlm_run_repl", Map.of("session_id", id, "code", code));
        assertThat(reply.path("error").isObject()).as(reply.toString()).isFalse();
        return reply.path("stdout").asText();
    }

    /** The session as rlm_sessions lists it. */
    public JsonNode session(String id) {
        for (JsonNode s :
                ok("rlm_sessions", Map.of("verbose", true, "limit", 200)).path("sessions")) {
            if (s.path("session_id").asText().equals(id)) {
                return s;
            }
        }
        throw new AssertionError("session " + id + " not listed");
    }

    /**
     * Waits until the session's snapshot (copied to any snapshot store) is newer than its last trace
     * entry (step or load): calls that are neither, such as rlm_list_vars, need no snapshot.
     */
    public JsonNode awaitSnapshot(String id) throws InterruptedException {
        JsonNode steps = ok("rlm_get_trace", Map.of("session_id", id)).path("steps");
        Instant last = Instant.parse(steps.get(steps.size() - 1).path("at").asText());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            JsonNode s = session(id);
            if (s.path("snapshot_at").isTextual()
                    && !Instant.parse(s.path("snapshot_at").asText()).isBefore(last)) {
                return s;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no snapshot after the last step of " + id + ": " + session(id));
    }

    /** Each variable of the session with its status: live, spilled or lost. */
    public Map<String, String> statuses(String id) {
        Map<String, String> statuses = new TreeMap<>();
        ok("rlm_list_vars", Map.of("session_id", id))
                .path("variables")
                .forEach(v ->
                        statuses.put(v.path("name").asText(), v.path("status").asText()));
        return statuses;
    }
}
