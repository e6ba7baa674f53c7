package dev.rlmmcp.tools.data;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;

/** rlm_list_buckets: the buckets the configured S3 account can see. */
public final class ListBucketsTool implements RlmTool {

    private final S3Store s3;
    private final ObjectMapper json;

    public ListBucketsTool(S3Store s3, ObjectMapper json) {
        this.s3 = s3;
        this.json = json;
    }

    @Override
    public String name() {
        return "rlm_list_buckets";
    }

    @Override
    public String description() {
        return "List the S3/MinIO buckets the server can read (name and creation time), to find data before "
                + "rlm_list_s3 and rlm_load_s3.";
    }

    @Override
    public Schema schema() {
        return Schema.object();
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        ObjectNode body = json.createObjectNode();
        ArrayNode buckets = body.putArray("buckets");
        for (S3Store.Bucket bucket : s3.buckets()) {
            ObjectNode b = buckets.addObject().put("name", bucket.name());
            if (bucket.created() != null) {
                b.put("created", bucket.created().toString());
            }
        }
        body.put("count", buckets.size());
        body.put("default_bucket", s3.settings().defaultBucket());
        return body;
    }
}
