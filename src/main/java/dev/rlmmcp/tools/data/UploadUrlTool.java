package dev.rlmmcp.tools.data;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.data.DataSources;
import dev.rlmmcp.data.Download;
import dev.rlmmcp.data.MeteredInputStream;
import dev.rlmmcp.data.S3Store;
import dev.rlmmcp.data.TransferException;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;

/** rlm_upload_url: the server downloads a URL and streams it into a bucket, part by part. */
public final class UploadUrlTool implements RlmTool {

    private final DataSources sources;
    private final ObjectMapper json;

    public UploadUrlTool(DataSources sources, ObjectMapper json) {
        this.sources = sources;
        this.json = json;
    }

    @Override
    public String name() {
        return "rlm_upload_url";
    }

    @Override
    public String description() {
        return """
                Download an http(s) URL on the server and store it in S3/MinIO (bucket default %s), streamed \
                in parts: nothing passes through the conversation and size is no problem (up to the server's \
                transfer cap). Then load it with rlm_load_s3. Example: \
                rlm_upload_url(url="https://example.com/data.csv", key="data/file.csv").""".formatted(sources.s3().settings().defaultBucket());
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("url", "An http:// or https:// URL the server can reach.", true)
                .string("key", "Object key to store it under, e.g. data/file.csv.", true)
                .string(
                        "bucket",
                        "Bucket name (default: " + sources.s3().settings().defaultBucket() + ").",
                        false);
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        String url = args.requiredString("url");
        String key = S3Args.key(args);
        String bucket = S3Args.bucket(args, sources.s3());
        S3Store s3 = sources.s3();
        s3.requireConfigured();
        long started = System.nanoTime();
        S3Store.Uploaded uploaded;
        String shown;
        try (Download download = sources.capped(sources.urls().open("url", url), "url");
                CallContext.Registration cancelled = caller.context().onCancel(download::close)) {
            shown = download.shown();
            long size = download.size();
            uploaded = s3.upload(
                    bucket,
                    key,
                    new MeteredInputStream(
                            download.body(), bytes -> caller.context().transferred("uploading " + shown, bytes, size)),
                    size);
        } catch (TransferException e) {
            throw e.refusal();
        } catch (SocketTimeoutException e) {
            throw new RlmException(
                    ErrorCode.TIMEOUT,
                    url + " stopped sending (read timed out); nothing was stored",
                    "url",
                    "retry, or raise --url-timeout-s");
        } catch (InterruptedIOException e) {
            throw new RlmException(ErrorCode.INTERRUPTED, "the upload of " + url + " was interrupted", "url", "retry");
        } catch (IOException e) {
            throw new RlmException(
                    ErrorCode.UPSTREAM_ERROR,
                    "reading " + url + " failed: " + e.getMessage() + "; nothing was stored",
                    "url",
                    "retry; check that the URL is reachable");
        }
        return uploadedReply(url, shown, uploaded, (System.nanoTime() - started) / 1e6);
    }

    /** The reply to an upload of {@code ms} milliseconds: where the object went, its size and the speed. */
    private ObjectNode uploadedReply(String url, String shown, S3Store.Uploaded uploaded, double ms) {
        ObjectNode body = json.createObjectNode();
        body.put("status", "uploaded");
        body.put("url", url);
        if (!shown.equals(url)) {
            body.put("final_url", shown);
        }
        body.put("bucket", uploaded.bucket());
        body.put("key", uploaded.key());
        body.put("size_bytes", uploaded.bytes());
        body.put("size_human", Bytes.human(uploaded.bytes()));
        body.put("parts", uploaded.parts());
        body.put("duration_ms", Math.round(ms * 1000) / 1000.0);
        body.put("mb_per_s", ms <= 0 ? 0 : Math.round(uploaded.bytes() / 1e6 / (ms / 1000) * 10) / 10.0);
        return body;
    }
}
