package dev.rlmmcp.tools.data;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_list_s3: one page of the objects in a bucket, optionally under a prefix. */
public final class ListS3Tool implements RlmTool {

    static final int DEFAULT_KEYS = 50;
    static final int MAX_KEYS = 1000;

    private final S3Store s3;
    private final ObjectMapper json;

    public ListS3Tool(S3Store s3, ObjectMapper json) {
        this.s3 = s3;
        this.json = json;
    }

    @Override
    public String name() {
        return "rlm_list_s3";
    }

    @Override
    public String description() {
        return """
                List objects in an S3/MinIO bucket (default %s): key, size (bytes and human) and last-modified \
                time, %d per page by default. When is_truncated is true, pass next_continuation_token as \
                continuation_token for the next page. Example: rlm_list_s3(prefix="logs/").""".formatted(s3.settings().defaultBucket(), DEFAULT_KEYS);
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("bucket", "Bucket name (default: " + s3.settings().defaultBucket() + ").", false)
                .string("prefix", "Only keys starting with this, e.g. logs/2024/.", false)
                .string("continuation_token", "next_continuation_token from the previous page.", false)
                .integer("max_keys", "Objects per page (default " + DEFAULT_KEYS + ").", 1, MAX_KEYS);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String bucket = S3Args.bucket(args, s3);
        String prefix = args.optionalString("prefix");
        String token = args.optionalString("continuation_token");
        if (token != null && token.isBlank()) {
            token = null;
        }
        Long maxKeys = args.integer("max_keys", 1, MAX_KEYS);
        S3Store.Page page = s3.list(
                bucket, prefix == null ? "" : prefix, token, maxKeys == null ? DEFAULT_KEYS : maxKeys.intValue());
        ObjectNode body = json.createObjectNode();
        body.put("bucket", bucket);
        body.put("prefix", page.prefix());
        ArrayNode objects = body.putArray("objects");
        for (S3Store.Entry entry : page.entries()) {
            ObjectNode o = objects.addObject()
                    .put("key", entry.key())
                    .put("size_bytes", entry.size())
                    .put("size_human", Bytes.human(entry.size()));
            if (entry.lastModified() != null) {
                o.put("last_modified", entry.lastModified().toString());
            }
        }
        body.put("count", objects.size());
        body.put("is_truncated", page.truncated());
        if (page.nextToken() != null) {
            body.put("next_continuation_token", page.nextToken());
        }
        return body;
    }
}
