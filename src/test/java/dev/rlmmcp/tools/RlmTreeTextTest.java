package dev.rlmmcp.tools;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.rlm.Trajectories;
import org.junit.jupiter.api.Test;

/** rlm_get_trace's text for RLM runs: the tree under the table, and a page of an export. */
class RlmTreeTextTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final TextRenderer.View SEEN = new TextRenderer.View(false, 0);

    @Test
    void anRlmEntryShowsAsATreeUnderTheTable() throws Exception {
        ObjectNode reply = (ObjectNode) JSON.readTree("""
                {"session_id":"s-3","name":"sales","state":"active","runtime_ms":4100,"io_bytes":0,"trace_length":2,\
                "start":0,"end":2,"steps":[{"index":0,"step":0,"kind":"exec","status":"ok","input":"x = 1",\
                "output":"","duration_ms":1.2},{"index":1,"kind":"rlm","status":"done",\
                "input":"Which region sold the most?","output":"east","duration_ms":4100}]}""");
        ((ObjectNode) reply.path("steps").get(1)).set("rlm", Trajectories.depthTwoTree());

        String text = TextRenderer.render("rlm_get_trace", reply, SEEN);

        assertThat(text).isEqualTo("""
                s-3 sales: active, entries 0-2 of 2, runtime 4100 ms, io 0 B
                # | kind | status | ms | input | output
                0 | exec | ok | 1 | x = 1 | \n\
                1 | rlm | done | 4100 | Which region sold the most? | east

                entry 1 rlm run run-7: 7 iterations, 3 children, depth 2, 1 cache hit
                  RLM depth 0 · root-model · "Which region sold the most?" · 2 iterations · answer "east" (ready) · 2500/390 tokens · $0.0033 · 4.1 s
                    iteration 1 · 1 code block · rlm_query ×2 · llm_query ×2 (1 cached) · 400/90 tokens · $0.0009 · 3.1 s
                      RLM depth 1 · root-model · "Best region in: north,120 south,80 east,200" · 1 iteration · answer "east (200)" (ready) · 604/102 tokens · $0.0010 · 1.5 s
                        iteration 1 · 1 code block · rlm_query ×1 · final answer "east (200)" · 280/60 tokens · $0.0005 · 1.5 s
                          RLM depth 2 · root-model · "Is 200 the largest of 120, 80, 200?" · 1 iteration · answer "200" (ready) · 324/42 tokens · $0.0010 · 900 ms
                            iteration 1 · 1 code block · llm_query ×1 · final answer "200" · 310/40 tokens · $0.0004 · 900 ms
                      RLM depth 1 · root-model · "Best region in: west,45" · 2 iterations · answer "west (45)" (ready) · 550/45 tokens · $0.0010 · 1.4 s
                        iteration 1 · 1 code block (1 failed) · 250/20 tokens · $0.0003 · 700 ms
                        iteration 2 · 1 code block · final answer "west (45)" · 300/25 tokens · $0.0003 · 650 ms
                    iteration 2 · 1 code block · final answer "east" · 520/30 tokens · $0.0006 · 800 ms""");
    }

    @Test
    void aBigTreeIsCutAndSaysWhereTheWholeRunIs() throws Exception {
        ObjectNode step = (ObjectNode) JSON.readTree("{\"index\":5,\"kind\":\"rlm\"}");
        ObjectNode rlm = step.putObject("rlm").put("run_id", "big");
        var iterations =
                rlm.putObject("root").put("depth", 0).put("prompt", "q").putArray("iterations");
        for (int i = 0; i < 300; i++) {
            iterations.addObject().put("ms", 1.0);
        }

        String text = RlmTreeText.of(step);

        assertThat(text.split("\n")).hasSize(RlmTreeText.MAX_LINES + 1);
        assertThat(text).endsWith("\n[182 more lines; the whole run: export \"rlm_jsonl\" with entry 5]\n");
    }

    @Test
    void anExportPageSaysWhereItIsInTheWhole() throws Exception {
        ObjectNode page = (ObjectNode) JSON.readTree("""
                {"session_id":"s-3","entry":1,"format":"rlm_jsonl","jsonl":"{\\"type\\":\\"meta","offset":0,\
                "returned_chars":15,"total_chars":900,"next_offset":15}""");
        ObjectNode whole = (ObjectNode) JSON.readTree("""
                {"session_id":"s-3","entry":1,"format":"rlm_jsonl","jsonl":"{}\\n","offset":0,\
                "returned_chars":3,"total_chars":3,"next_offset":null}""");

        assertThat(TextRenderer.render("rlm_get_trace", page, SEEN))
                .isEqualTo("{\"type\":\"meta\n[entry 1 as rlm_jsonl: chars 0-15 of 900; next: offset=15]");
        assertThat(TextRenderer.render("rlm_get_trace", whole, SEEN)).isEqualTo("{}\n");
    }
}
