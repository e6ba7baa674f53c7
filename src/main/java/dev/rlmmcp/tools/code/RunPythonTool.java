package dev.rlmmcp.tools.code;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.bridge.BridgeException;
import dev.rlmmcp.bridge.BridgedServers;
import dev.rlmmcp.bridge.ServerDefinition;
import dev.rlmmcp.core.BridgeSetup;
import dev.rlmmcp.core.CodeError;
import dev.rlmmcp.core.KernelSettings;
import dev.rlmmcp.core.Limits;
import dev.rlmmcp.core.McpCallbacks;
import dev.rlmmcp.core.Session;
import dev.rlmmcp.core.Sessions;
import dev.rlmmcp.core.StepExtras;
import dev.rlmmcp.core.StepOutcome;
import dev.rlmmcp.core.StepOutput;
import dev.rlmmcp.core.StepRequest;
import dev.rlmmcp.core.StepResult;
import dev.rlmmcp.rlm.RlmRuns;
import dev.rlmmcp.tools.Args;
import dev.rlmmcp.tools.Caller;
import dev.rlmmcp.tools.Replies;
import dev.rlmmcp.tools.ResponseFormat;
import dev.rlmmcp.tools.RlmTool;
import dev.rlmmcp.tools.Schema;
import java.time.Duration;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.stream.Collectors;

/**
 * run_python (the code-execution mode): one program that may call the tools of other MCP
 * servers through {@code mcp_<alias>} proxies. It runs in a fresh kernel that is thrown away after
 * the run, or in an existing session's kernel when session_id is given.
 */
public final class RunPythonTool implements RlmTool {

    static final long DEFAULT_TIMEOUT_S = 30;

    private final Sessions sessions;
    private final BridgedServers bridge;
    private final KernelSettings settings;
    private final ObjectMapper json;

    private final RlmRuns runs;

    public RunPythonTool(Sessions sessions, BridgedServers bridge, RlmRuns runs) {
        this.runs = runs;
        this.sessions = sessions;
        this.bridge = bridge;
        this.settings = sessions.settings();
        this.json = sessions.json();
    }

    @Override
    public String name() {
        return "run_python";
    }

    @Override
    public String description() {
        return """
                Run one Python program in a sandboxed kernel (fresh by default; pass session_id to run in an \
                existing session). Servers named in servers are callable from the code as async proxies: \
                r = await mcp_<server>.<tool>(**arguments) (names made identifiers: get-sum is get_sum), or \
                mcp.runtime.call_tool(server, tool, arguments), list_tools(server), list_servers(), \
                describe_server(name), discovered_servers(); failures raise mcp.runtime.MCPError. Top-level \
                await works. Call many tools in one program and print only what you need. Configured servers: \
                %s. Reply: status (success | error | timeout | validation_error), summary, exitCode, stdout \
                and stderr as lines, servers, error, timeoutSeconds; TOON by default.""".formatted(configured());
    }

    private String configured() {
        List<ServerDefinition> all = bridge.discovered();
        return all.isEmpty() ? "none" : all.stream().map(ServerDefinition::name).collect(Collectors.joining(", "));
    }

    @Override
    public Schema schema() {
        return Schema.object()
                .string("code", "Python source to run; top-level await is allowed.", true)
                .stringList("servers", "MCP servers this run may call (by configured name); no others are reachable.")
                .integer(
                        "timeout",
                        "Seconds before the run is stopped (default %d).".formatted(DEFAULT_TIMEOUT_S),
                        1,
                        settings.maxTimeout().toSeconds())
                .string(
                        "session_id",
                        "Run in this existing session (its variables stay); omit for a fresh kernel "
                                + "that is discarded after the run.",
                        false);
    }

    @Override
    public ResponseFormat defaultFormat() {
        return ResponseFormat.TOON;
    }

    @Override
    public boolean isError(ObjectNode reply) {
        return !"success".equals(reply.path("status").asText());
    }

    /** What a call asks for, its arguments checked: the code, the servers it may call, its limit, its session. */
    private record Asked(String code, List<String> servers, long timeout, Session existing) {}

    private Asked asked(Args args) {
        String code = args.requiredString("code");
        if (code.isBlank()) {
            throw RlmException.invalid("code", "code is empty", "pass the Python program to run as code");
        }
        List<String> servers = List.copyOf(new LinkedHashSet<>(args.stringList("servers")));
        for (String server : servers) {
            if (bridge.find(server).isEmpty()) {
                throw RlmException.invalid(
                        "servers",
                        "no MCP server named '" + server + "' is configured",
                        "use one of: " + configured() + " (from the MCP config files, or --mcp-config)");
            }
        }
        Long timeout = args.integer("timeout", 1, settings.maxTimeout().toSeconds());
        String sessionId = args.sessionId();
        return new Asked(
                code,
                servers,
                timeout == null ? DEFAULT_TIMEOUT_S : timeout,
                sessionId == null ? null : sessions.get(sessionId));
    }

    @Override
    public ObjectNode call(Args args, Caller caller) {
        Asked asked;
        try {
            asked = asked(args);
        } catch (RlmException e) {
            return validationError(e);
        }
        String code = asked.code();
        List<String> servers = asked.servers();
        long timeout = asked.timeout();
        Session existing = asked.existing();
        // a bridged call may run past the run's own limit by the interrupt grace: the run's limit (its
        // interrupt, then its kill) is what ends the run, reported as a timeout, never the bridge's wait
        McpCallbacks callbacks =
                new McpCallbacks(bridge, servers, Duration.ofSeconds(timeout).plus(settings.interruptGrace()), json);
        BridgeSetup setup;
        try {
            setup = callbacks.kernelSetup();
        } catch (BridgeException e) {
            return reply(
                    "error",
                    "MCP server could not be loaded: " + e.getMessage(),
                    null,
                    "",
                    "",
                    servers,
                    e.getMessage(),
                    timeout);
        }
        StepRequest step = new StepRequest(
                code,
                Duration.ofSeconds(timeout),
                StepExtras.of(caller.sampling(), callbacks.byKind(), setup),
                caller.context());
        return run(step, existing, servers, timeout);
    }

    /** Runs the program in the session asked for, else in a throwaway one that is deleted after the reply. */
    private ObjectNode run(StepRequest step, Session existing, List<String> servers, long timeout) {
        Session session = existing != null ? existing : sessions.create("run_python", Limits.NONE);
        if (existing == null) {
            // a throwaway kernel is given back at once: at capacity, waiting for one beats a refusal
            session.queueForKernel(Duration.ofSeconds(timeout));
        }
        boolean suspended = false;
        try {
            StepOutcome outcome = runs.execute(session, step);
            if (outcome instanceof StepOutcome.Suspended waiting) {
                // the agent answers with rlm_answer on this session, which must outlive the reply
                suspended = true;
                return Replies.suspended(waiting);
            }
            ObjectNode reply = fromStep(((StepOutcome.Done) outcome).result(), servers, timeout);
            if (existing != null) {
                reply.put("session_id", existing.id());
            }
            return reply;
        } finally {
            if (existing == null && !suspended) {
                // The throwaway kernel's shutdown need not delay the reply.
                Thread.ofVirtual().name("run-python-cleanup").start(() -> sessions.delete(session.id()));
            }
        }
    }

    /** The reply for a step: success, error (the code raised, or its kernel crashed) or timeout. */
    private ObjectNode fromStep(StepResult result, List<String> servers, long timeout) {
        StepOutput exec = result.exec();
        String stdout = exec == null ? "" : exec.stdout();
        String stderr = exec == null ? "" : exec.stderr();
        return switch (result.status()) {
            case OK ->
                reply(
                        "success",
                        stdout.isEmpty() && stderr.isEmpty() ? "Success (no output)" : "Success",
                        0,
                        stdout,
                        stderr,
                        servers,
                        null,
                        timeout);
            case ERROR -> {
                CodeError error = exec.error();
                String what = error.type() + ": " + error.message();
                yield reply(
                        "error",
                        "Error: " + what,
                        1,
                        stdout,
                        stderr + (error.traceback() == null ? "" : error.traceback()),
                        servers,
                        what,
                        timeout);
            }
            case INTERRUPTED, KILLED ->
                reply(
                        "timeout",
                        "Timeout: execution exceeded " + timeout + "s",
                        null,
                        stdout,
                        stderr,
                        servers,
                        result.message(),
                        timeout);
            case CRASHED ->
                reply(
                        "error",
                        "Kernel crashed: " + result.message(),
                        1,
                        stdout,
                        stderr,
                        servers,
                        result.message(),
                        timeout);
        };
    }

    private ObjectNode validationError(RlmException e) {
        if (e.code() != ErrorCode.INVALID_ARGUMENT && e.code() != ErrorCode.SESSION_NOT_FOUND) {
            throw e;
        }
        ObjectNode reply =
                json.createObjectNode().put("status", "validation_error").put("summary", e.getMessage());
        reply.put("error", e.getMessage());
        if (e.argument() != null) {
            reply.put("argument", e.argument());
        }
        if (e.fix() != null) {
            reply.put("fix", e.fix());
        }
        return reply;
    }

    /** The reply, in the shape code-execution clients read: status, summary, exitCode, servers, stdout and stderr as lines, error, timeoutSeconds. */
    private ObjectNode reply(
            String status,
            String summary,
            Integer exitCode,
            String stdout,
            String stderr,
            List<String> servers,
            String error,
            long timeout) {
        ObjectNode reply = json.createObjectNode().put("status", status).put("summary", summary);
        if (exitCode != null) {
            reply.put("exitCode", exitCode);
        }
        if (!servers.isEmpty()) {
            ArrayNode list = reply.putArray("servers");
            servers.forEach(list::add);
        }
        lines(reply.putArray("stdout"), stdout);
        lines(reply.putArray("stderr"), stderr);
        if (error != null) {
            reply.put("error", error);
        }
        reply.put("timeoutSeconds", timeout);
        return reply;
    }

    private static void lines(ArrayNode into, String text) {
        text.lines().forEach(into::add);
    }
}
