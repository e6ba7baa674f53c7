package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.core.kernel.Kernel;
import dev.rlmmcp.core.kernel.KernelDiedException;
import dev.rlmmcp.core.kernel.KernelReply;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One REPL: a kernel started on first use, and the calls made on it, one at a time. A kernel that
 * dies is replaced at once, and the caller is told plainly what was lost.
 */
public final class Session implements AutoCloseable {

    private final String id;
    private final KernelFactory kernels;
    private final Settings settings;
    private final Instant created = Instant.now();
    private final ReentrantLock lock = new ReentrantLock();
    private volatile Instant lastActive = created;
    private Kernel kernel;
    private int kernelRestarts;

    Session(String id, KernelFactory kernels) {
        this.id = id;
        this.kernels = kernels;
        this.settings = kernels.settings();
    }

    public String id() {
        return id;
    }

    public Instant created() {
        return created;
    }

    public Instant lastActive() {
        return lastActive;
    }

    /** Runs code; the reply carries output, the error if the code raised, and what happened to the kernel. */
    public ObjectNode execute(String code, Duration timeout) {
        ObjectNode request = request("exec").put("code", code);
        lock.lock();
        try {
            KernelReply reply = exchange(request, null, timeout);
            JsonNode error = reply.body().path("error");
            boolean interrupted = reply.interrupted() && error.path("interrupted").asBoolean();
            ObjectNode body = checked(reply, interrupted ? "interrupted" : error.isObject() ? "error" : "ok");
            if (interrupted) {
                body.put("message", "interrupted after %.1f s (timeout %s s); all variables are intact"
                        .formatted(reply.interruptedAfterMs() / 1000.0, seconds(timeout)));
            }
            describeEvictions(body);
            return body;
        } catch (KernelDiedException e) {
            return kernelLost(e, timeout);
        } finally {
            lock.unlock();
        }
    }

    public ObjectNode loadData(String name, String data, DataType type) {
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName());
        return load(request, data);
    }

    /** Loads a file the caller has already confined to the data root; the kernel reads it itself. */
    public ObjectNode loadFile(String name, Path file, String shownPath, DataType type) {
        long size;
        try {
            size = Files.size(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        if (settings.memoryLimitBytes() > 0 && size > settings.memoryLimitBytes()) {
            throw new RlmException(ErrorCode.TOO_LARGE,
                    "%s is %s, more than this session's memory limit of %s".formatted(shownPath, Bytes.human(size),
                            Bytes.human(settings.memoryLimitBytes())),
                    "path", "load a smaller file or a slice of it, or raise RLM_MAX_MEMORY_MB / --max-memory-mb");
        }
        ObjectNode request = request("load").put("name", name).put("data_type", type.wireName())
                .put("path", file.toString());
        ObjectNode body = load(request, null);
        body.put("path", shownPath);
        body.put("file_bytes", size);
        return body;
    }

    private ObjectNode load(ObjectNode request, String data) {
        return call(request, data, settings.maxTimeout(), true);
    }

    public ObjectNode listVars() {
        return call(request("vars"), null, settings.defaultTimeout(), false);
    }

    public ObjectNode varInfo(String name) {
        return call(request("var_info").put("name", name), null, settings.defaultTimeout(), false);
    }

    public ObjectNode clear(String name) {
        return call(request("clear").put("name", name), null, settings.defaultTimeout(), false);
    }

    public ObjectNode clearAll() {
        return call(request("clear").put("all", true), null, settings.defaultTimeout(), false);
    }

    public ObjectNode memory() {
        ObjectNode body = call(request("memory"), null, settings.defaultTimeout(), false);
        body.put("sandbox", kernels.launcherName());
        return body;
    }

    /** Whether a kernel process is running for this session now. */
    public boolean hasKernel() {
        Kernel k = kernel;
        return k != null && k.isAlive();
    }

    private ObjectNode call(ObjectNode request, String data, Duration timeout, boolean mayEvict) {
        lock.lock();
        try {
            ObjectNode body = checked(exchange(request, data, timeout), null);
            if (mayEvict) {
                describeEvictions(body);
            }
            return body;
        } catch (KernelDiedException e) {
            ObjectNode lost = kernelLost(e, timeout);
            throw new RlmException(ErrorCode.KERNEL_ERROR, lost.path("message").asText(), null,
                    "if the data is too big for memory, load a smaller part or raise the memory limit");
        } finally {
            lock.unlock();
        }
    }

    private KernelReply exchange(ObjectNode request, String data, Duration timeout) throws KernelDiedException {
        lastActive = Instant.now();
        if (kernel == null) {
            kernel = kernels.start(id);
        }
        try {
            return kernel.call(request, data, timeout, settings.interruptGrace());
        } finally {
            lastActive = Instant.now();
        }
    }

    /** The kernel's reply as the agent sees it (status and session first), or its refusal thrown. */
    private ObjectNode checked(KernelReply reply, String status) {
        ObjectNode body = reply.body();
        if (!reply.ok()) {
            ErrorCode code = ErrorCode.of(body.path("code").asText());
            String argument = body.path("argument").isTextual() ? body.path("argument").asText() : null;
            throw new RlmException(code, body.path("message").asText("the kernel refused the request"), argument,
                    fixFor(code));
        }
        body.remove("ok");
        body.remove("id");
        ObjectNode shown = kernels.json().createObjectNode();
        if (status != null) {
            shown.put("status", status);
        }
        shown.put("session_id", id);
        return shown.setAll(body);
    }

    private static String fixFor(ErrorCode code) {
        return switch (code) {
            case VARIABLE_NOT_FOUND -> "call rlm_list_vars to see the variables of this session";
            case INVALID_DATA -> "check that data_type matches the data, or load it as text";
            case OUT_OF_MEMORY -> "free memory with rlm_clear, or load a smaller part of the data";
            case INTERRUPTED -> "the load ran past the largest timeout (--max-timeout-s); load a smaller part";
            default -> null;
        };
    }

    private ObjectNode kernelLost(KernelDiedException e, Duration timeout) {
        Kernel dead = kernel;
        kernel = null;
        kernelRestarts++;
        if (dead != null) {
            dead.close();
        }
        String fresh;
        try {
            kernel = kernels.start(id);
            fresh = "a fresh kernel is ready";
        } catch (RlmException startFailure) {
            fresh = "a fresh kernel could not be started yet (" + startFailure.getMessage() + "); the next call retries";
        }
        String what = e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT
                ? "the code ran past its %s s timeout and ignored the interrupt, so the kernel was killed"
                        .formatted(seconds(timeout))
                : e.getMessage();
        ObjectNode body = kernels.json().createObjectNode();
        body.put("status", e.reason() == KernelDiedException.Cause.KILLED_AFTER_TIMEOUT ? "killed" : "crashed");
        body.put("session_id", id);
        body.put("message", what + ". ALL VARIABLES OF THIS SESSION WERE LOST: reload the data; " + fresh + ".");
        body.put("variables_lost", true);
        body.put("kernel_exit", e.exit());
        body.put("kernel_restarts", kernelRestarts);
        return body;
    }

    private void describeEvictions(ObjectNode body) {
        JsonNode evicted = body.path("evicted");
        if (!evicted.isArray() || evicted.isEmpty()) {
            return;
        }
        StringBuilder names = new StringBuilder();
        long bytes = 0;
        for (JsonNode v : evicted) {
            names.append(names.isEmpty() ? "" : ", ").append(v.path("name").asText());
            bytes += v.path("size_bytes").asLong();
        }
        String note = "memory passed %d%% of the %s limit, so the least recently used variables were dropped to get under %d%%: %s (%s). They are gone; reload them if needed."
                .formatted(Math.round(settings.cleanupThreshold() * 100), Bytes.human(settings.memoryLimitBytes()),
                        Math.round(settings.cleanupTarget() * 100), names, Bytes.human(bytes));
        body.put("memory_note", note);
    }

    private ObjectNode request(String op) {
        return kernels.json().createObjectNode().put("op", op);
    }

    private static String seconds(Duration d) {
        return d == null ? "unlimited" : (d.toMillis() % 1000 == 0 ? String.valueOf(d.toSeconds())
                : String.format("%.1f", d.toMillis() / 1000.0));
    }

    public int kernelRestarts() {
        return kernelRestarts;
    }

    @Override
    public void close() {
        lock.lock();
        try {
            if (kernel != null) {
                kernel.close();
                kernel = null;
            }
        } finally {
            lock.unlock();
        }
    }
}
