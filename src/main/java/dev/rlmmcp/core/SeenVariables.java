package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.time.Instant;

/** A session's variables as its kernel last listed them, for those who watch it without waiting on it. */
final class SeenVariables {

    private final ObjectMapper json;
    private volatile JsonNode list;
    private volatile Instant at;

    SeenVariables(ObjectMapper json) {
        this.json = json;
    }

    void see(JsonNode variables) {
        if (variables.isArray()) {
            list = variables;
            at = Instant.now();
        }
    }

    /** The kernel died: the list it gave is no longer true. */
    void forget() {
        list = null;
    }

    /**
     * Adds to {@code body} the list as last seen (or, if none was, the names {@code trace} knows),
     * with where it comes from: {@code asked} says the kernel was asked just now.
     */
    void describe(ObjectNode body, boolean running, boolean asked, Trace trace) {
        body.put("kernel_running", running);
        body.put("source", asked ? "kernel" : list != null ? "last_seen" : "trace");
        if (!asked) {
            body.put("note", !running ? "the kernel is not running; shown as last known, values are not loaded"
                    : "code is running; shown as last seen");
        }
        if (at != null) {
            body.put("as_of", at.toString());
        }
        body.set("variables", list != null ? list : namesFrom(trace));
    }

    private JsonNode namesFrom(Trace trace) {
        ArrayNode names = json.createArrayNode();
        trace.variableNames().forEach(n -> names.addObject().put("name", n));
        return names;
    }
}
