package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * A request to the harness, written as a frame {@code {"op": op(), "id": …, fields…}} and answered
 * with an {@code R}. The harness's op_* handlers (rlm_harness) read the same field names.
 */
public sealed interface KernelRequest<R> {

    /** The harness operation that serves this request. */
    @JsonIgnore
    String op();

    /** What the harness answers with. */
    @JsonIgnore
    Class<R> replyType();

    /**
     * Runs code as a cell of the REPL; {@code mcp} (or null) sets up the bridged servers first. With
     * {@code answer} (an RLM's loop asks for it) the reply reports the {@code answer} dict the code left,
     * as {@link ExecResult#answer()}.
     */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Exec(
            String code,
            McpSetup mcp,
            @JsonInclude(JsonInclude.Include.NON_DEFAULT) boolean answer) implements KernelRequest<ExecResult> {

        public Exec(String code, McpSetup mcp) {
            this(code, mcp, false);
        }

        /** A turn of an RLM's loop: the reply says what {@code answer} holds. */
        public static Exec reportingAnswer(String code) {
            return new Exec(code, null, true);
        }

        public String op() {
            return "exec";
        }

        public Class<ExecResult> replyType() {
            return ExecResult.class;
        }
    }

    /** Stores a value: parsed from the request's payload, or read by the kernel from {@code path}. */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Load(String name, DataType dataType, String path) implements KernelRequest<Loaded> {
        public String op() {
            return "load";
        }

        public Class<Loaded> replyType() {
            return Loaded.class;
        }
    }

    /** One page of a variable's value rendered for a model: characters [offset, offset + maxChars). */
    @JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
    record Get(String name, long offset, long maxChars) implements KernelRequest<Page> {
        public String op() {
            return "get";
        }

        public Class<Page> replyType() {
            return Page.class;
        }
    }

    record Vars() implements KernelRequest<VarList> {
        public String op() {
            return "vars";
        }

        public Class<VarList> replyType() {
            return VarList.class;
        }
    }

    record VarInfo(String name) implements KernelRequest<VarEntry> {
        public String op() {
            return "var_info";
        }

        public Class<VarEntry> replyType() {
            return VarEntry.class;
        }
    }

    /** Deletes one variable, or with {@code all} every one. */
    @JsonInclude(JsonInclude.Include.NON_NULL)
    record Clear(String name, Boolean all) implements KernelRequest<Cleared> {
        public static Clear one(String name) {
            return new Clear(name, null);
        }

        public static Clear every() {
            return new Clear(null, true);
        }

        public String op() {
            return "clear";
        }

        public Class<Cleared> replyType() {
            return Cleared.class;
        }
    }

    /** The kernel's memory use, with its resident size. */
    record Memory() implements KernelRequest<MemoryUse> {
        public String op() {
            return "memory";
        }

        public Class<MemoryUse> replyType() {
            return MemoryUse.class;
        }
    }

    /** Writes every variable changed since the last snapshot to the snapshot directory. */
    record Snapshot() implements KernelRequest<SnapshotWritten> {
        public String op() {
            return "snapshot";
        }

        public Class<SnapshotWritten> replyType() {
            return SnapshotWritten.class;
        }
    }

    /**
     * An RLM's loop starts on the kernel: {@code answer} becomes {@code {"content": "", "ready": False}},
     * unless the name holds something other than such a dict (refused: NAME_TAKEN, argument "answer").
     */
    record RlmBegin() implements KernelRequest<RlmBegun> {
        public String op() {
            return "rlm_begin";
        }

        public Class<RlmBegun> replyType() {
            return RlmBegun.class;
        }
    }

    /** Attaches the snapshot directory {@code dir} (as the kernel sees it) and restores from it. */
    record Restore(String dir) implements KernelRequest<Restored> {
        public String op() {
            return "restore";
        }

        public Class<Restored> replyType() {
            return Restored.class;
        }
    }

    /**
     * Stops writing snapshots (a kernel kept in memory only, such as a child RLM's, that was started
     * with a writable directory) and keeps {@code dir} (as the kernel sees it) for values it hands to
     * other kernels.
     */
    record Detach(String dir) implements KernelRequest<Detached> {
        public String op() {
            return "detach";
        }

        public Class<Detached> replyType() {
            return Detached.class;
        }
    }
}
