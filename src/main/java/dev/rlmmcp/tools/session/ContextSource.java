package dev.rlmmcp.tools.session;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.core.DataType;
import dev.rlmmcp.core.LoadResult;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.data.DataRoot;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.data.Download;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Where an RLM run's {@code context} comes from: inline text, a file under the data root, an S3 object
 * or a URL, loaded into a session's variable {@code context} by the same code paths as rlm_load_data,
 * rlm_load_file, rlm_load_s3 and rlm_load_url (so with the same checks, caps and progress).
 */
public sealed interface ContextSource {

    /** The variable a run's context is bound to. */
    String VARIABLE = "context";

    String SHAPE = "{\"text\": \"...\"}, {\"file\": \"logs/app.log\"}, {\"s3\": {\"bucket\": \"data\", \"key\": "
            + "\"logs/app.log\"}} or {\"url\": \"https://...\"}, optionally with \"data_type\": \"lines\"";
    List<String> KINDS = List.of("text", "file", "s3", "url");

    DataType type();

    /** Loads the context into {@code session}'s variable {@value #VARIABLE}; {@code argument}: the one to blame. */
    LoadResult load(Session session, DataRoot dataRoot, DataSources sources, String argument, CallContext context);

    /** What the trace and the figures say was loaded. */
    String shown();

    record Text(String text, DataType type) implements ContextSource {
        @Override
        public LoadResult load(
                Session session, DataRoot dataRoot, DataSources sources, String argument, CallContext context) {
            return session.loadData(VARIABLE, text, type, context);
        }

        @Override
        public String shown() {
            return "inline text (" + text.length() + " chars)";
        }
    }

    record File(String path, DataType type) implements ContextSource {
        @Override
        public LoadResult load(
                Session session, DataRoot dataRoot, DataSources sources, String argument, CallContext context) {
            return session.loadFile(VARIABLE, dataRoot.resolve(argument, path), path, type, context);
        }

        @Override
        public String shown() {
            return path;
        }
    }

    /** {@code bucket} null: the configured default bucket. */
    record S3(String bucket, String key, DataType type) implements ContextSource {
        @Override
        public LoadResult load(
                Session session, DataRoot dataRoot, DataSources sources, String argument, CallContext context) {
            String named = sources.s3().bucket(bucket);
            if (!named.matches("[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]")) {
                throw RlmException.invalid(
                        argument,
                        "'" + named + "' is not a valid bucket name",
                        "use 3 to 63 lower-case letters, digits, dots or hyphens; rlm_list_buckets lists them");
            }
            Download download = sources.capped(sources.s3().open(named, key), argument);
            return session.loadStream(
                    VARIABLE,
                    type,
                    download,
                    argument,
                    "context <- s3://" + named + "/" + key + " (" + type.wireName() + ")",
                    context);
        }

        @Override
        public String shown() {
            return "s3://" + (bucket == null ? "" : bucket) + "/" + key;
        }
    }

    record Url(String url, DataType type) implements ContextSource {
        @Override
        public LoadResult load(
                Session session, DataRoot dataRoot, DataSources sources, String argument, CallContext context) {
            Download download = sources.capped(sources.urls().open(argument, url), argument);
            return session.loadStream(
                    VARIABLE,
                    type,
                    download,
                    argument,
                    "context <- " + download.shown() + " (" + type.wireName() + ")",
                    context);
        }

        @Override
        public String shown() {
            return url;
        }
    }

    /** The source an rlm_solve {@code context} argument describes: exactly one of text, file, s3, url. */
    static ContextSource of(Map<String, Object> given, String argument) {
        Set<String> unknown = new TreeSet<>(given.keySet());
        unknown.removeAll(KINDS);
        unknown.remove("data_type");
        if (!unknown.isEmpty()) {
            throw RlmException.invalid(
                    argument, argument + " has no field " + String.join(", ", unknown), "give one of " + SHAPE);
        }
        List<String> kinds = KINDS.stream().filter(given::containsKey).toList();
        if (kinds.size() != 1) {
            throw RlmException.invalid(
                    argument,
                    argument
                            + (kinds.isEmpty()
                                    ? " names no source"
                                    : " names " + kinds.size() + " sources (" + String.join(", ", kinds) + ")"),
                    "give exactly one of " + SHAPE);
        }
        DataType type = type(given.get("data_type"), argument);
        String kind = kinds.getFirst();
        Object value = given.get(kind);
        return switch (kind) {
            case "text" -> new Text(string(value, argument, kind), type);
            case "file" -> new File(nonBlank(value, argument, kind), type);
            case "url" -> new Url(nonBlank(value, argument, kind), type);
            default -> {
                if (!(value instanceof Map<?, ?> s3)
                        || !(s3.get("key") instanceof String key)
                        || !(s3.get("bucket") == null || s3.get("bucket") instanceof String)
                        || !Set.of("bucket", "key").containsAll(s3.keySet())) {
                    throw RlmException.invalid(
                            argument,
                            argument + ".s3 must be an object with the string key and, "
                                    + "if not the default bucket, the string bucket",
                            "give {\"s3\": {\"bucket\": \"data\", \"key\": \"logs/app.log\"}}");
                }
                yield s3((String) s3.get("bucket"), key, type, argument);
            }
        };
    }

    /** An S3 source; the key is checked here, before any request is made. */
    static S3 s3(String bucket, String key, DataType type, String argument) {
        int bytes = key.getBytes(StandardCharsets.UTF_8).length;
        if (bytes == 0 || bytes > 1024) {
            throw RlmException.invalid(
                    argument,
                    "the S3 key must be 1 to 1024 bytes of UTF-8, not " + bytes,
                    "give the object's key, e.g. logs/app.log; rlm_list_s3 lists them");
        }
        return new S3(bucket == null || bucket.isBlank() ? null : bucket, key, type);
    }

    private static String string(Object value, String argument, String kind) {
        if (!(value instanceof String s)) {
            throw RlmException.invalid(argument, argument + "." + kind + " must be a string", "give " + SHAPE);
        }
        return s;
    }

    private static String nonBlank(Object value, String argument, String kind) {
        String s = string(value, argument, kind);
        if (s.isBlank()) {
            throw RlmException.invalid(argument, argument + "." + kind + " is empty", "give " + SHAPE);
        }
        return s;
    }

    static DataType type(Object value, String argument) {
        if (value == null) {
            return DataType.TEXT;
        }
        if (value instanceof String s) {
            try {
                return DataType.valueOf(s.strip().toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                // refused below
            }
        }
        throw RlmException.invalid(
                argument,
                argument + ".data_type is " + value + ", not a known data type",
                "use one of: " + DataType.choices());
    }
}
