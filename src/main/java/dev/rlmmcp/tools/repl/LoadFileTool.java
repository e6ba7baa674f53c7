package dev.rlmmcp.tools.repl;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.nio.file.Path;

/** rlm_load_file: the kernel reads a file under the data root straight into a variable. */
public final class LoadFileTool implements RlmTool {

    private final Sessions sessions;
    private final DataRoot dataRoot;

    public LoadFileTool(Sessions sessions, DataRoot dataRoot) {
        this.sessions = sessions;
        this.dataRoot = dataRoot;
    }

    @Override
    public String name() {
        return "rlm_load_file";
    }

    @Override
    public String description() {
        return """
                Load a file from the server's data root (the directory it may read, chosen by whoever runs it) \
                into a REPL variable without passing it through the conversation. path is relative to the data \
                root. data_type: text, json, lines or csv, as for rlm_load_data.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("name", "Variable name to bind (a Python identifier).", true)
                .string("path", "File path, relative to the data root.", true)
                .choice("data_type", "How to parse the file.", DataType.wireNames(), "text")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String name = args.variableName("name");
        String path = args.requiredString("path");
        DataType type = args.dataType("data_type");
        String sessionId = args.sessionId();
        Path file = dataRoot.resolve("path", path);
        return Replies.load(
                sessions.resolve(sessionId, caller.connection()).loadFile(name, file, path, type, caller.context()),
                sessions.settings());
    }
}
