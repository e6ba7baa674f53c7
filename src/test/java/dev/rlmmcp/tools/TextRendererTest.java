package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class TextRendererTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String MEMORY = """
            "memory":{"total_bytes":28,"total_human":"28 B","variable_count":1,"spilled_count":0,\
            "limit_bytes":1073741824,"percent":0.0}""";
    private static final TextRenderer.View SEEN = new TextRenderer.View(false, 0);

    private static ObjectNode reply(String json) {
        try {
            return (ObjectNode) JSON.readTree(json);
        } catch (Exception e) {
            throw new IllegalArgumentException(json, e);
        }
    }

    private static ObjectNode step(String fields) {
        return reply("""
                {"status":"ok","session_id":"s-1","stdout":"","stderr":"","error":null,"variables_changed":[],\
                "variables_deleted":[],"duration_ms":0.02,"evicted":[],%s,"step":0%s}""".formatted(MEMORY, fields.isEmpty() ? "" : "," + fields));
    }

    @Test
    void aStepShowsWhatItPrintedAsPrintedAndNothingEmpty() {
        assertThat(TextRenderer.render("rlm_execute", step("\"stdout\":\"42\\n\""), SEEN))
                .isEqualTo("42\n");
        assertThat(TextRenderer.render("rlm_execute", step(""), SEEN)).isEqualTo("[ok]");
        assertThat(TextRenderer.render("rlm_execute", step("\"stdout\":\"a\\n\",\"stderr\":\"w\\n\""), SEEN))
                .isEqualTo("a\n[stderr]\nw\n");
    }

    @Test
    void theFooterNamesVariablesMadeAndDeleted() {
        assertThat(TextRenderer.render("rlm_execute", step("\"variables_changed\":[\"x\",\"y\"]"), SEEN))
                .isEqualTo("[set x, y]");
        assertThat(TextRenderer.render(
                        "rlm_run_repl",
                        step("\"stdout\":\"done\",\"variables_changed\":[\"x\"],\"variables_deleted\":[\"old\"]"),
                        SEEN))
                .isEqualTo("done\n[set x; deleted old]");
    }

    @Test
    void theFooterNamesWhatIsStillBeingWrittenAndWhatAStopLost() {
        assertThat(TextRenderer.render(
                        "rlm_execute",
                        step("\"variables_changed\":[\"small\",\"big\"],\"still_writing\":[\"big\"]"),
                        SEEN))
                .isEqualTo("[set small, big; still being written: big]");
        assertThat(TextRenderer.render("rlm_execute", step("\"stdout\":\"1\\n\",\"lost_at_stop\":[\"big\"]"), SEEN))
                .isEqualTo("1\n[lost when the server stopped, still being written then: big]");
    }

    @Test
    void theSessionIdOnlyWhereTheViewAsksForIt() {
        ObjectNode printed = step("\"stdout\":\"1\\n\"");
        assertThat(TextRenderer.render("rlm_execute", printed, TextRenderer.View.FIRST))
                .isEqualTo("1\n[session s-1]");
        assertThat(TextRenderer.render("rlm_execute", printed, SEEN)).isEqualTo("1\n");
    }

    @Test
    void anErrorIsAShortTracebackOfTheUsersCode() {
        ObjectNode failed = step("""
                "status":"error","error":{"type":"ZeroDivisionError","message":"division by zero","traceback":\
                "Traceback (most recent call last):\\n  File \\"<cell 3>\\", line 2, in <module>\\n    1/0\\n     ~^~\\n\
                ZeroDivisionError: division by zero\\n"}""");
        assertThat(TextRenderer.render("rlm_execute", failed, SEEN))
                .isEqualTo("  line 2, in <module>\n    1/0\nZeroDivisionError: division by zero\n");
    }

    @Test
    void anInterruptSaysWhatHappenedAndThatTheVariablesStay() {
        ObjectNode stopped = step("""
                "status":"interrupted","message":"interrupted after 1.0 s (timeout 1 s); all variables are intact",\
                "error":{"type":"KeyboardInterrupt","message":"m","traceback":"Traceback (most recent call last):\\n\
                  File \\"<cell 6>\\", line 1, in <module>\\n    time.sleep(3)\\nKeyboardInterrupt: m\\n"}""");
        assertThat(TextRenderer.render("rlm_execute", stopped, SEEN))
                .isEqualTo(
                        "  line 1, in <module>\n    time.sleep(3)\ninterrupted after 1.0 s (timeout 1 s); all variables are intact");
    }

    @Test
    void aTruncationSaysWhereTheRestIs() {
        ObjectNode cut = step("""
                "stdout":"aaa\\n[... cut ...]\\n","truncated":{"stdout":{"total_chars":1001,"shown_chars":200,\
                "kept_in":"_last_output","kept_chars":1001}}""");
        assertThat(TextRenderer.render("rlm_execute", cut, SEEN))
                .endsWith("\n[stdout cut: 200 of 1,001 chars shown; all in _last_output]");
    }

    @Test
    void guardrailsEvictionsAndSlowStepsAreReported() {
        ObjectNode busy = step("""
                "stdout":"x\\n","duration_ms":2500.0,"guardrail_stop":"max_steps","guardrail_message":"no more steps.",\
                "memory_note":"memory passed 80% of the 1.0 GB limit; spilled: big\"""");
        assertThat(TextRenderer.render("rlm_run_repl", busy, SEEN))
                .isEqualTo(
                        "x\n[took 2.5 s; guardrail max_steps: no more steps.; memory passed 80% of the 1.0 GB limit; spilled: big]");
    }

    @Test
    void aMemoryWarningOnlyWhenItPassesANewLevel() {
        ObjectNode full = reply("""
                {"status":"ok","session_id":"s-1","stdout":"","variables_changed":["big"],"memory":{"percent":63.2,\
                "limit_bytes":1073741824}}""");
        assertThat(TextRenderer.memoryBand(full)).isEqualTo(6);
        assertThat(TextRenderer.render("rlm_execute", full, SEEN)).isEqualTo("[set big; memory 63% of 1.0 GB]");
        assertThat(TextRenderer.render("rlm_execute", full, new TextRenderer.View(false, 6)))
                .isEqualTo("[set big]");
        assertThat(TextRenderer.memoryBand(step(""))).isZero();
    }

    @Test
    void aRefusalKeepsItsCodeArgumentAndFix() {
        ObjectNode refused = reply("""
                {"error":{"code":"VARIABLE_NOT_FOUND","message":"no variable named 'nope'","argument":"name",\
                "fix":"call rlm_list_vars"}}""");
        for (String tool : List.of("rlm_var_info", "rlm_execute", "rlm_list_s3")) {
            assertThat(TextRenderer.render(tool, refused, TextRenderer.View.FIRST))
                    .isEqualTo("ERROR VARIABLE_NOT_FOUND (name): no variable named 'nope'\nfix: call rlm_list_vars");
        }
    }

    @Test
    void aLoadDescribesTheVariableWithColumnsOrAPreview() {
        ObjectNode csv = reply("""
                {"session_id":"s-1","name":"rows","type":"list","data_type":"csv","size_bytes":888,"size_human":"888 B",\
                "preview":"[{'a': '1'}]","duration_ms":0.2,"evicted":[],%s,"length":30000,"columns":["a","b"]}""".formatted(MEMORY));
        assertThat(TextRenderer.render("rlm_load_data", csv, SEEN))
                .isEqualTo("rows: list, 30,000 items, 888 B; columns: a, b");
        ObjectNode text = reply("""
                {"session_id":"s-1","name":"log","type":"str","size_human":"5 MB","length":12,"preview":"%s"}""".formatted("x".repeat(100)));
        assertThat(TextRenderer.render("rlm_load_file", text, SEEN))
                .isEqualTo("log: str, 12 chars, 5 MB\n" + "x".repeat(TextRenderer.PREVIEW_CHARS - 1) + "…");
    }

    @Test
    void listingsAreCompactTables() {
        ObjectNode vars = reply("""
                {"session_id":"s-1","variables":[{"name":"rows","status":"live","type":"list","size_bytes":888,\
                "size_human":"888 B","created":"t","last_accessed":"t","preview":"[1, 2]","length":2},\
                {"name":"n","status":"live","type":"int","size_human":"28 B","preview":"1"}],%s}""".formatted(MEMORY));
        assertThat(TextRenderer.render("rlm_list_vars", vars, SEEN))
                .isEqualTo(
                        "name | type | len | size | preview\nrows | list | 2 | 888 B | [1, 2]\nn | int |  | 28 B | 1");
        ObjectNode spilled = reply("""
                {"variables":[{"name":"big","status":"spilled","type":"bytes","size_human":"1 GB","preview":"b''"}]}""");
        assertThat(TextRenderer.render("rlm_list_vars", spilled, SEEN)).contains("| status |", "| spilled |");

        ObjectNode sessions = reply("""
                {"sessions":[{"session_id":"s-1","name":"default","state":"stopped","guardrail_stop":"budget_exceeded",\
                "steps":3,"memory":"1 KB","last_active":"2026-11-24T17:50:47.762874570Z"}],"count":1,"total":2,\
                "next_offset":1,"next":"pass offset 1 for the next 1 of 2"}""");
        assertThat(TextRenderer.render("rlm_sessions", sessions, SEEN)).isEqualTo("""
                1 of 2 sessions
                session_id | name | state | steps | memory | last_active
                s-1 | default | stopped (budget_exceeded) | 3 | 1 KB | 2026-11-24T17:50:47Z
                [pass offset 1 for the next 1 of 2]""");

        ObjectNode trace = reply("""
                {"session_id":"s-2","name":"ctx","state":"finalized","steps":[{"index":0,"kind":"exec","status":"ok",\
                "input":"print(1)\\nprint(2)","output":"1\\n2\\n","duration_ms":3.4}],"runtime_ms":3,"io_bytes":20,\
                "llm_calls":0,"final_answer":"42","trace_length":1,"start":0,"end":1}""");
        assertThat(TextRenderer.render("rlm_get_trace", trace, SEEN)).isEqualTo("""
                s-2 ctx: finalized, entries 0-1 of 1, runtime 3 ms, io 20 B
                final answer: 42
                # | kind | status | ms | input | output
                0 | exec | ok | 3 | print(1)⏎print(2) | 1⏎2⏎""");
    }

    @Test
    void memoryVariableInfoClearAndPagedValues() {
        ObjectNode memory = reply("""
                {"session_id":"s-1","total_bytes":888,"total_human":"888 B","variable_count":1,"spilled_count":0,\
                "limit_bytes":1073741824,"percent":0.0,"limit_human":"1.0 GB","rss_human":"23.2 MB"}""");
        assertThat(TextRenderer.render("rlm_memory", memory, SEEN))
                .isEqualTo("888 B in 1 variable (0.0% of 1.0 GB); kernel RSS 23.2 MB");
        ObjectNode info = reply("""
                {"session_id":"s-1","name":"rows","status":"live","type":"list","size_human":"888 B","length":2,\
                "columns":["a","b"],"preview":"[{'a': '1', 'b': '2'}]"}""");
        assertThat(TextRenderer.render("rlm_var_info", info, SEEN))
                .isEqualTo("rows: list, 2 items, 888 B; columns: a, b\n[{'a': '1', 'b': '2'}]");
        ObjectNode cleared = reply("""
                {"session_id":"s-1","cleared":["rows"],"freed_human":"888 B",%s}""".formatted(MEMORY));
        assertThat(TextRenderer.render("rlm_clear", cleared, SEEN)).isEqualTo("deleted rows (888 B freed)");
        ObjectNode page = reply("""
                {"session_id":"s-1","var_name":"c","type":"str","format":"text","total_chars":5,"offset":0,\
                "returned_chars":2,"next_offset":2,"value":"he"}""");
        assertThat(TextRenderer.render("rlm_get_var", page, SEEN)).isEqualTo("he\n[chars 0-2 of 5; next: offset=2]");
    }

    @Test
    void aNewSessionShowsItsIdLimitsAndContext() {
        ObjectNode created = reply("""
                {"session_id":"s-9","name":"context","state":"active","limits":{"max_steps":3,"max_runtime_ms":null,\
                "budget_limit":null,"timeout_s":30,"llm_max_calls":1000},"context":{"name":"context","type":"str",\
                "size_human":"54 B","preview":"'hello'","length":5}}""");
        assertThat(TextRenderer.render("rlm_init_context", created, SEEN))
                .isEqualTo("session s-9 (max_steps 3, timeout_s 30)\ncontext: str, 5 chars, 54 B\n'hello'");
    }

    @Test
    void otherRepliesKeepTheirFactsAsKeyValueLines() {
        ObjectNode buckets = JSON.valueToTree(Map.of("count", 1));
        assertThat(TextRenderer.render("rlm_list_buckets", buckets, SEEN)).isEqualTo("count: 1");
    }
}
