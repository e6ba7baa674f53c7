package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Requests of protocol 2026-07-28 that ask their client for input across rounds (multi round-trip
 * requests): a request whose handler sends the client a request gets an input_required result with
 * those requests and a request state; the client's retry, with its answers and that state, resumes the
 * same execution (see {@link ResumableCall}). The state names the call and its round, with an HMAC
 * under a key of this server run over them and over what the request asks (method, name or URI,
 * arguments): altered, answered already, sent with another request or to a restarted server, it is refused.
 */
final class InputRounds {

    /** The methods whose result may be input_required. */
    static final Set<String> METHODS =
            Set.of(McpSchema.METHOD_TOOLS_CALL, McpSchema.METHOD_PROMPT_GET, McpSchema.METHOD_RESOURCES_READ);
    /** The client capabilities that let a handler ask the client something. */
    private static final Set<String> ASKABLE = Set.of("sampling", "elicitation", "roots");
    /** How long a call that may run as a task runs before it becomes one (a quicker one answers at once). */
    static final long TASK_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(500);
    /** A call whose client has not come back this long is given up: what it asks fails, and it goes on to its end. */
    static final long ABANDON_NANOS = TimeUnit.MINUTES.toNanos(10);

    private static final Pattern STATE = Pattern.compile("([0-9a-f]{32})\\.(\\d{1,9})\\.([A-Za-z0-9_-]{43})");
    private static final SecureRandom RANDOM = new SecureRandom();

    private final McpJsonMapper mapper;
    private final ServedRequests served;
    private final Tasks tasks;
    private final byte[] key = new byte[32];
    private final Map<String, ResumableCall> waiting = new ConcurrentHashMap<>();
    /** What every request state starts with: in a cluster, this node's sealed name, so any node can route to it. */
    private volatile String tag = "";

    private final ExecutorService threads = Executors.newCachedThreadPool(
            Thread.ofPlatform().daemon().name("mcp-resumable-", 1).factory());

    void tag(String tag) {
        this.tag = tag;
    }

    InputRounds(McpJsonMapper mapper, ServedRequests served, Tasks tasks) {
        this.mapper = mapper;
        this.served = served;
        this.tasks = tasks;
        RANDOM.nextBytes(key);
    }

    /**
     * Whether a request is served as a resumable call: one of {@link #METHODS}, from a client that
     * declared a capability a handler may ask through, or that brings answers or a request state.
     */
    static boolean resumable(McpSchema.JSONRPCRequest call) {
        if (!METHODS.contains(call.method()) || !(call.params() instanceof Map<?, ?> params)) {
            return false;
        }
        if (params.containsKey("inputResponses") || params.containsKey("requestState")) {
            return true;
        }
        Map<String, Object> meta = StatelessProtocol.meta(call);
        return meta != null
                && meta.get(StatelessProtocol.META_CAPABILITIES) instanceof Map<?, ?> declared
                && declared.keySet().stream().anyMatch(ASKABLE::contains);
    }

    /** The refusal of a round whose inputResponses or requestState has the wrong type, or null. */
    private static McpSchema.JSONRPCResponse malformedRound(McpSchema.JSONRPCRequest call, Map<?, ?> params) {
        if (params.containsKey("inputResponses") && !(params.get("inputResponses") instanceof Map<?, ?>)) {
            return invalid(
                    call,
                    "params.inputResponses must be an object that maps the key of each input request "
                            + "to its result",
                    "invalid_input_responses");
        }
        if (params.containsKey("requestState") && !(params.get("requestState") instanceof String)) {
            return invalid(
                    call,
                    "params.requestState must be the string the input_required result carried",
                    "invalid_request_state");
        }
        return null;
    }

    /**
     * Serves one round of {@code call}: resumes the call its request state names (or starts it on
     * {@code session}, using the default REPL session of {@code connection}), hands over the answers it
     * brings, and returns the call's answer or an input_required result. {@code notifications} hears what
     * the call says during this round. As {@code asTask} allows, a call still running after
     * {@link #TASK_AFTER_NANOS} (REQUIRED: at once) becomes a task, answered with its CreateTaskResult.
     */
    McpSchema.JSONRPCResponse serve(
            McpSchema.JSONRPCRequest call,
            Supplier<McpStreamableServerSession> session,
            String connection,
            Consumer<McpSchema.JSONRPCMessage> notifications,
            TaskSupport asTask) {
        Map<?, ?> params = (Map<?, ?>) call.params();
        McpSchema.JSONRPCResponse malformed = malformedRound(call, params);
        if (malformed != null) {
            return malformed;
        }
        Object inputs = params.get("inputResponses");
        Object state = params.get("requestState");
        Map<String, Object> given = new LinkedHashMap<>();
        if (inputs instanceof Map<?, ?> answers) {
            answers.forEach((k, v) -> given.put(String.valueOf(k), v));
        }
        boolean fresh = state == null;
        ResumableCall resumed;
        if (fresh) {
            String id = newId();
            resumed = new ResumableCall(id, session.get(), mapper, served.serve("resumable-" + id, call.id()));
            resumed.start(withoutRounds(call), connection, threads, notifications);
        } else {
            resumed = claim((String) state, call);
            if (resumed == null) {
                return invalid(
                        call,
                        "params.requestState is not the state of this request's next round: it was "
                                + "altered, answered already, belongs to another request, or its call has ended or was given "
                                + "up (the server restarted, or no retry came for "
                                + TimeUnit.NANOSECONDS.toMinutes(ABANDON_NANOS)
                                + " minutes); send the request again without requestState and inputResponses",
                        "invalid_request_state");
            }
        }
        ResumableCall.Outcome outcome;
        try {
            outcome = resumed.await(given, notifications, System.nanoTime() + patience(asTask));
        } catch (ResumableCall.InvalidInput e) {
            if (fresh) {
                // no state went out to resume it by: nothing will answer what it asked
                resumed.abandon("the client's answer was refused: " + e.getMessage());
            }
            return invalid(
                    call,
                    e.getMessage()
                            + (fresh ? "" : "; the same requestState may be sent again with a " + "valid answer"),
                    "invalid_input_responses");
        } catch (RuntimeException e) {
            waiting.remove(resumed.id());
            throw e;
        }
        return answer(call, resumed, outcome);
    }

    /** How long a round waits before its call becomes a task, as {@code asTask} allows. */
    private static long patience(TaskSupport asTask) {
        return switch (asTask) {
            case FORBIDDEN -> Long.MAX_VALUE / 4;
            case OPTIONAL -> TASK_AFTER_NANOS;
            case REQUIRED -> 0;
        };
    }

    /** The answer to a round that ended with {@code outcome}: the call's answer, input_required, or a task. */
    private McpSchema.JSONRPCResponse answer(
            McpSchema.JSONRPCRequest call, ResumableCall resumed, ResumableCall.Outcome outcome) {
        return switch (outcome) {
            case ResumableCall.Answered answered -> {
                waiting.remove(resumed.id());
                McpSchema.JSONRPCResponse response = answered.response();
                yield new McpSchema.JSONRPCResponse(response.jsonrpc(), call.id(), response.result(), response.error());
            }
            case ResumableCall.Waiting asked -> {
                waiting.put(resumed.id(), resumed);
                yield McpSchema.JSONRPCResponse.result(
                        call.id(), inputRequired(asked.asked(), tag + state(resumed.id(), resumed.round(), call)));
            }
            case ResumableCall.Running running -> {
                waiting.remove(resumed.id());
                yield McpSchema.JSONRPCResponse.result(call.id(), tasks.adopt(resumed));
            }
        };
    }

    private static Map<String, Object> inputRequired(List<ResumableCall.Asked> asked, String state) {
        Map<String, Object> result = new LinkedHashMap<>();
        result.put("resultType", "input_required");
        result.put("inputRequests", inputRequests(asked));
        result.put("requestState", state);
        return result;
    }

    /** The requests to the client, by key, as input_required results and tasks show them. */
    static Map<String, Object> inputRequests(List<ResumableCall.Asked> asked) {
        Map<String, Object> requests = new LinkedHashMap<>();
        for (ResumableCall.Asked a : asked) {
            Map<String, Object> request = new LinkedHashMap<>();
            request.put("method", a.method());
            request.put("params", a.params());
            requests.put(a.key(), request);
        }
        return requests;
    }

    /** The call a request state names, if the state is this server's for this request and its next round. */
    private ResumableCall claim(String tagged, McpSchema.JSONRPCRequest call) {
        String state = tagged.startsWith(tag) ? tagged.substring(tag.length()) : tagged;
        var match = STATE.matcher(state);
        if (!match.matches()) {
            return null;
        }
        String id = match.group(1);
        int round = Integer.parseInt(match.group(2));
        if (!MessageDigest.isEqual(
                state.getBytes(StandardCharsets.US_ASCII),
                state(id, round, call).getBytes(StandardCharsets.US_ASCII))) {
            return null;
        }
        ResumableCall resumed = waiting.get(id);
        return resumed != null && resumed.claim(round) ? resumed : null;
    }

    /** The state of round {@code round} of call {@code id}, bound to what {@code call} asks. */
    private String state(String id, int round, McpSchema.JSONRPCRequest call) {
        String named = id + "." + round;
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(key, "HmacSHA256"));
            mac.update((named + "\n" + binding(call)).getBytes(StandardCharsets.UTF_8));
            return named + "." + Base64.getUrlEncoder().withoutPadding().encodeToString(mac.doFinal());
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is part of every JDK", e);
        }
    }

    /** What a request asks, whatever the order of its arguments' keys: its method, name or URI, and arguments. */
    private String binding(McpSchema.JSONRPCRequest call) {
        Map<?, ?> params = (Map<?, ?>) call.params();
        try {
            return call.method() + "\n" + params.get("name") + "\n" + params.get("uri") + "\n"
                    + mapper.writeValueAsString(sorted(params.get("arguments")));
        } catch (IOException e) {
            throw new IllegalStateException("arguments parsed from JSON write back as JSON", e);
        }
    }

    private static Object sorted(Object value) {
        if (value instanceof Map<?, ?> map) {
            Map<String, Object> sorted = new TreeMap<>();
            map.forEach((k, v) -> sorted.put(String.valueOf(k), sorted(v)));
            return sorted;
        }
        if (value instanceof List<?> list) {
            return list.stream().map(InputRounds::sorted).toList();
        }
        return value;
    }

    /** The request as its handler sees it: without the fields of the rounds. */
    private static McpSchema.JSONRPCRequest withoutRounds(McpSchema.JSONRPCRequest call) {
        Map<Object, Object> params = new LinkedHashMap<>((Map<?, ?>) call.params());
        params.remove("inputResponses");
        params.remove("requestState");
        return new McpSchema.JSONRPCRequest(call.jsonrpc(), call.method(), call.id(), params);
    }

    private static McpSchema.JSONRPCResponse invalid(McpSchema.JSONRPCRequest call, String message, String reason) {
        return McpSchema.JSONRPCResponse.error(
                call.id(),
                new McpSchema.JSONRPCResponse.JSONRPCError(
                        McpSchema.ErrorCodes.INVALID_PARAMS, message, Map.of("reason", reason)));
    }

    private static String newId() {
        byte[] id = new byte[16];
        RANDOM.nextBytes(id);
        return HexFormat.of().formatHex(id);
    }

    /** Gives up the calls whose client has not come back for {@link #ABANDON_NANOS}. */
    void sweep() {
        for (ResumableCall call : new ArrayList<>(waiting.values())) {
            if (call.unattendedFor(ABANDON_NANOS) && waiting.remove(call.id(), call)) {
                call.abandon("the client did not come back with its answers within "
                        + TimeUnit.NANOSECONDS.toMinutes(ABANDON_NANOS) + " minutes");
            }
        }
    }

    /** At shutdown: what every waiting call asks fails, since no client can answer it now. */
    void close() {
        for (ResumableCall call : new ArrayList<>(waiting.values())) {
            call.abandon("the server is shutting down");
        }
        waiting.clear();
        threads.shutdown();
    }
}
