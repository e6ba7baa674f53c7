package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.llm.LlmLimits;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class SessionRecordsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void aSessionRecordReadsBackAsWritten() throws Exception {
        SessionRecord record = new SessionRecord(
                "s-1",
                "analysis",
                Instant.parse("2026-11-20T10:00:00.123456Z"),
                Instant.parse("2026-11-20T10:05:00Z"),
                SessionState.STOPPED,
                Guardrails.BUDGET,
                "42",
                7,
                1234L,
                5678L,
                9,
                2,
                Instant.parse("2026-11-20T10:04:59.5Z"),
                new Limits(20, 60_000L, 1_000_000L, Duration.ofMillis(30_500)),
                new LlmLimits(5, 50, 3, 10_000, 200_000L, Duration.ofSeconds(45), 2));

        String stored = SessionRecords.write(JSON, record);

        assertThat(SessionRecords.read(JSON, "s-1", stored, LlmLimits.DEFAULTS)).isEqualTo(record);
        JsonNode json = JSON.readTree(stored);
        assertThat(json.path("state").asText()).isEqualTo("STOPPED");
        assertThat(json.path("limits").path("step_timeout_ms").asLong()).isEqualTo(30_500);
        assertThat(json.path("llm_limits").path("call_timeout_ms").asLong()).isEqualTo(45_000);
    }

    @Test
    void unsetLimitsStayUnsetAndARecordWithoutLlmLimitsGetsTheDefaults() throws Exception {
        SessionRecord record = new SessionRecord(
                "s-2",
                "default",
                Instant.parse("2026-11-20T10:00:00Z"),
                Instant.parse("2026-11-20T10:00:01Z"),
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
                LlmLimits.DEFAULTS);
        ObjectNode old = (ObjectNode) JSON.readTree(SessionRecords.write(JSON, record));
        old.remove("llm_limits");
        LlmLimits defaults = new LlmLimits(1, 2, 3, 4, 5L, Duration.ofSeconds(6), 7);

        SessionRecord read = SessionRecords.read(JSON, "s-2", JSON.writeValueAsString(old), defaults);

        assertThat(read.limits()).isEqualTo(Limits.NONE);
        assertThat(read.llmLimits()).isEqualTo(defaults);
        assertThat(read.snapshotAt()).isNull();
        assertThat(read.stoppedBy()).isNull();
        assertThat(read.finalAnswer()).isNull();
    }

    @Test
    void aTraceEntryWithMemoryAndLlmUseReadsBackAsWritten() throws Exception {
        ObjectNode usage = JSON.createObjectNode().put("calls", 2).put("tokens", 310);
        JsonNode calls = JSON.readTree("[{\"model\":\"m\",\"prompt_chars\":120,\"tokens\":150},"
                + "{\"model\":\"m\",\"prompt_chars\":140,\"tokens\":160}]");
        Step step = new Step(
                12,
                9,
                "exec",
                Instant.parse("2026-11-20T10:03:00.25Z"),
                "answer = llm_query(q)",
                "ok",
                "done",
                List.of("answer", "notes"),
                812.125,
                4096,
                Guardrails.TIMEOUT,
                3_145_728,
                usage,
                calls,
                null);

        JsonNode stored = JSON.readTree(JSON.writeValueAsString(SessionRecords.view(step)));

        assertThat(SessionRecords.step(stored)).isEqualTo(step);
        assertThat(stored.path("memory_bytes").asLong()).isEqualTo(3_145_728);
        assertThat(stored.path("llm_usage")).isEqualTo(usage);
        assertThat(stored.path("llm_calls")).isEqualTo(calls);
        assertThat(stored.path("guardrail_stop").asText()).isEqualTo(Guardrails.TIMEOUT);
    }

    @Test
    void anRlmEntryKeepsItsRunTreeThroughTheStore() throws Exception {
        JsonNode tree = JSON.readTree("{\"run_id\":\"r1\",\"question\":\"how many?\",\"root\":{\"id\":\"n0\","
                + "\"depth\":0,\"iterations\":[{\"index\":0,\"code_blocks\":[{\"code\":\"x = rlm_query('a')\","
                + "\"sub_calls\":[{\"kind\":\"rlm\",\"child\":{\"id\":\"n1\",\"depth\":1}}]}]}]}}");
        Step run = new Step(
                3,
                null,
                "rlm",
                Instant.parse("2026-11-20T10:05:00Z"),
                "how many?",
                "done",
                "42",
                List.of(),
                1500.5,
                0,
                null,
                0,
                null,
                null,
                tree);

        JsonNode stored = JSON.readTree(JSON.writeValueAsString(SessionRecords.view(run)));

        assertThat(stored.path("rlm")).isEqualTo(tree);
        assertThat(SessionRecords.step(stored)).isEqualTo(run);
        assertThat(JSON.valueToTree(SessionRecords.view(new Step(
                                0,
                                null,
                                "load",
                                Instant.EPOCH,
                                "",
                                "done",
                                "",
                                List.of(),
                                0,
                                0,
                                null,
                                0,
                                null,
                                null,
                                null)))
                        .has("rlm"))
                .isFalse();
    }

    @Test
    void aLoadEntryHasNoStepNumberNorLlmUse() throws Exception {
        Step load = new Step(
                0,
                null,
                "load",
                Instant.parse("2026-11-20T10:01:00Z"),
                "rlm_load_data doc (text)",
                "done",
                "str, 1.0 KB",
                List.of("doc"),
                3.5,
                1024,
                null,
                2048,
                null,
                null,
                null);

        JsonNode stored = JSON.valueToTree(SessionRecords.view(load));

        assertThat(stored.has("step")).isFalse();
        assertThat(stored.has("guardrail_stop")).isFalse();
        assertThat(stored.has("llm_usage")).isFalse();
        assertThat(stored.has("llm_calls")).isFalse();
        assertThat(SessionRecords.step(stored)).isEqualTo(load);
    }
}
