package dev.rlmmcp.tools.data;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_load_url: an http(s) URL streamed straight into a REPL variable. */
public final class LoadUrlTool implements RlmTool {

    private final Sessions sessions;
    private final DataSources sources;

    public LoadUrlTool(Sessions sessions, DataSources sources) {
        this.sessions = sessions;
        this.sources = sources;
    }

    @Override
    public String name() {
        return "rlm_load_url";
    }

    @Override
    public String description() {
        return """
                Download an http(s) URL into a REPL variable: the server fetches it and streams it into the \
                REPL, never through the conversation. Redirects are followed; private, loopback and link-local \
                addresses are refused unless the server allows them. data_type: text, json, lines or csv.""";
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("url", "An http:// or https:// URL the server can reach.", true)
                .string("name", "Variable name to bind (a Python identifier).", true)
                .choice("data_type", "How to parse the content.", DataType.wireNames(), "text")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String url = args.requiredString("url");
        String name = args.variableName("name");
        DataType type = args.dataType("data_type");
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        Download download = sources.capped(sources.urls().open("url", url), "url");
        ObjectNode body = Replies.load(
                session.loadStream(
                        name,
                        type,
                        download,
                        "url",
                        "rlm_load_url " + name + " <- " + download.shown() + " (" + type.wireName() + ")",
                        caller.context()),
                sessions.settings());
        body.put("url", url);
        return body;
    }
}
