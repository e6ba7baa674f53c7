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

/** rlm_load_s3: an S3/MinIO object streamed straight into a REPL variable. */
public final class LoadS3Tool implements RlmTool {

    private final Sessions sessions;
    private final DataSources sources;

    public LoadS3Tool(Sessions sessions, DataSources sources) {
        this.sessions = sessions;
        this.sources = sources;
    }

    @Override
    public String name() {
        return "rlm_load_s3";
    }

    @Override
    public String description() {
        return """
                Load an object from S3/MinIO into a REPL variable: the server streams it straight into the \
                REPL, never through the conversation, so large objects are fine (up to the session's memory \
                limit). bucket defaults to %s. data_type: text, json, lines or csv, as for rlm_load_data. \
                Example: rlm_load_s3(key="logs/app.log", name="logs").""".formatted(sources.s3().settings().defaultBucket());
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("key", "Object key in the bucket, e.g. logs/app.log.", true)
                .string("name", "Variable name to bind (a Python identifier).", true)
                .string(
                        "bucket",
                        "Bucket name (default: " + sources.s3().settings().defaultBucket() + ").",
                        false)
                .choice("data_type", "How to parse the object.", DataType.wireNames(), "text")
                .sessionId();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String key = S3Args.key(args);
        String name = args.variableName("name");
        String bucket = S3Args.bucket(args, sources.s3());
        DataType type = args.dataType("data_type");
        Session session = sessions.resolve(args.sessionId(), caller.connection());
        Download download = sources.capped(sources.s3().open(bucket, key), "key");
        ObjectNode body = Replies.load(
                session.loadStream(
                        name,
                        type,
                        download,
                        "key",
                        "rlm_load_s3 " + name + " <- s3://" + bucket + "/" + key + " (" + type.wireName() + ")",
                        caller.context()),
                sessions.settings());
        body.put("bucket", bucket);
        body.put("key", key);
        return body;
    }
}
