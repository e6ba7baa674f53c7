package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.List;
import org.junit.jupiter.api.Test;

class TraceTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    @Test
    void keepsTheLastEntriesAndSaysHowManyWereDropped() {
        Trace trace = new Trace(JSON);
        for (int i = 0; i < Trace.KEPT + 3; i++) {
            trace.append(i, "exec", "x = " + i, JSON.createObjectNode().put("stdout", "out " + i), 1.0, 5, null, 0, null);
        }

        ObjectNode body = JSON.createObjectNode();
        trace.slice(body, 0, 5);

        assertThat(trace.length()).isEqualTo(Trace.KEPT + 3);
        assertThat(body.path("trace_dropped").asInt()).isEqualTo(3);
        assertThat(body.path("start").asInt()).isEqualTo(3);
        assertThat(body.path("end").asInt()).isEqualTo(5);
        assertThat(body.path("steps")).hasSize(2);
        assertThat(body.path("steps").get(0).path("output").asText()).isEqualTo("out 3");
    }

    @Test
    void aLoadEntryNamesTheVariableItMadeAndARestoredTraceGoesOnFromItsLength() {
        Trace trace = new Trace(JSON);
        trace.restore(List.of(), 7);
        ObjectNode reply = JSON.createObjectNode().put("name", "doc").put("type", "str").put("size_human", "1 KB");

        Step entry = trace.append(null, "load", "rlm_load_data doc (text)", reply, 2.0, 1024, null, 4096, null);

        assertThat(entry.index()).isEqualTo(7);
        assertThat(entry.status()).isEqualTo("done");
        assertThat(entry.output()).isEqualTo("str, 1 KB");
        assertThat(trace.variableNames()).containsExactly("doc");
    }
}
