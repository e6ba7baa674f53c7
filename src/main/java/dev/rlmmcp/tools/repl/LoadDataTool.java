package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_load_data: put text sent by the client into a REPL variable, parsed as asked. */
public final class LoadDataTool implements RlmTool {

    private final Sessions sessions;

    public LoadDataTool(Sessions sessions) {
        this.sessions = sessions;
    }

    @Override
    public String name() {
        return "rlm_load_data";
    }

    @Override
    public String description() {
        return """
                Load data given inline into a REPL variable. data_type: text (str), json (parsed value), \
                lines (list of str, one per line), csv (list of dicts keyed by the header row). The reply \
                describes the value (type, size, length, preview); the data itself is not echoed back.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("name", "Variable name to bind (a Python identifier).", true)
                .string("data", "The data, as text.", true)
                .choice("data_type", "How to parse the data.", DataType.wireNames(), "text")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String name = args.variableName("name");
        String data = args.requiredString("data");
        DataType type = args.dataType("data_type");
        return Replies.load(
                sessions.resolve(args.sessionId(), caller.connection()).loadData(name, data, type, caller.context()),
                sessions.settings());
    }
}
