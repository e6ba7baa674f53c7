package dev.rlmmcp.data;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;

/**
 * A download on its way to a kernel: metered for progress, cut at the session's memory limit, and
 * its failure told as a refusal that says how far it got.
 */
public final class StreamedLoad {

    private final Download download;
    private final String argument;
    private final MeteredInputStream metered;
    private final InputStream body;

    private StreamedLoad(Download download, String argument, MeteredInputStream metered, InputStream body) {
        this.download = download;
        this.argument = argument;
        this.metered = metered;
        this.body = body;
    }

    /**
     * Refuses, and closes, a download whose declared size is over {@code limit} (0: none); reports the
     * bytes it moves to {@code context} as progress.
     */
    public static StreamedLoad of(Download download, long limit, String argument, CallContext context) {
        long size = download.size();
        if (limit > 0 && size > limit) {
            download.close();
            throw new RlmException(
                    ErrorCode.TOO_LARGE,
                    "%s is %s, more than this session's memory limit of %s"
                            .formatted(download.shown(), Bytes.human(size), Bytes.human(limit)),
                    argument,
                    "load a smaller object, or raise RLM_MAX_MEMORY_MB / --max-memory-mb");
        }
        String label = "loading " + download.shown();
        MeteredInputStream metered =
                new MeteredInputStream(download.body(), bytes -> context.transferred(label, bytes, size));
        InputStream body = limit <= 0
                ? metered
                : new CappedInputStream(
                        metered,
                        limit,
                        cap -> new TransferException(
                                ErrorCode.TOO_LARGE,
                                "%s sent more than this session's memory limit of %s"
                                        .formatted(download.shown(), Bytes.human(cap)),
                                argument,
                                "load a smaller object, or raise RLM_MAX_MEMORY_MB / --max-memory-mb"));
        return new StreamedLoad(download, argument, metered, body);
    }

    public InputStream body() {
        return body;
    }

    public long sent() {
        return metered.total();
    }

    /** Where the data came from and how fast, for a transfer that took {@code ms}. */
    public Transfer transfer(double ms) {
        long sent = metered.total();
        return new Transfer(
                download.shown(),
                sent,
                Math.round(ms * 1000) / 1000.0,
                ms <= 0 ? 0 : Math.round(sent / 1e6 / (ms / 1000) * 10) / 10.0);
    }

    public RlmException failed(IOException cause) {
        String shown = download.shown();
        long sent = metered.total();
        if (cause instanceof TransferException t) {
            return t.refusal();
        }
        if (cause instanceof InterruptedIOException && !(cause instanceof SocketTimeoutException)) {
            return new RlmException(
                    ErrorCode.INTERRUPTED,
                    "loading " + shown + " stopped after " + Bytes.human(sent) + ": " + cause.getMessage()
                            + "; nothing was stored",
                    argument,
                    "the load was cancelled or ran past --max-timeout-s; load a smaller object or raise the limit");
        }
        if (cause instanceof SocketTimeoutException) {
            return new RlmException(
                    ErrorCode.TIMEOUT,
                    shown + " stopped sending after " + Bytes.human(sent) + " (read timed out); nothing was stored",
                    argument,
                    "retry, or raise --url-timeout-s");
        }
        return new RlmException(
                ErrorCode.UPSTREAM_ERROR,
                "reading " + shown + " failed after " + Bytes.human(sent) + ": " + cause.getMessage()
                        + "; nothing was stored",
                argument,
                "retry; check that the source is up");
    }
}
