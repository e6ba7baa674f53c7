package dev.rlmmcp.transport.stateless;

import dev.rlmmcp.transport.jsonrpc.RequestTransport;
import dev.rlmmcp.transport.jsonrpc.ServedRequests;
import io.modelcontextprotocol.json.McpJsonMapper;
import io.modelcontextprotocol.json.TypeRef;
import io.modelcontextprotocol.spec.McpSchema;
import io.modelcontextprotocol.spec.McpStreamableServerSession;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A request of protocol 2026-07-28 whose handler may ask the client for input (a sampling, elicitation
 * or roots request), served by the SDK on a thread of its own. Each request the handler sends the
 * client is held here under a key, to go out in an input_required result; the client's retry brings
 * the answers by those keys and they are handed to the handler, which has waited where it asked. So
 * one execution (a REPL step whose code calls {@code llm_query}, say) lives across several HTTP
 * requests without the client holding anything but the request state.
 */
final class ResumableCall extends RequestTransport {

    /** A request to the client awaiting its answer, under the key the client answers it by. */
    record Asked(String key, Object id, String method, Object params) {}

    /** What a round ends with. */
    sealed interface Outcome {}

    /** Still running at the deadline, asking nothing. */
    record Running() implements Outcome {}

    /** The call's answer (its id is the first round's). */
    record Answered(McpSchema.JSONRPCResponse response) implements Outcome {}

    /** The requests that await the client's answers, in the order they were asked. */
    record Waiting(List<Asked> asked) implements Outcome {}

    /** An answer that does not fit the request it answers: the round is refused, the call goes on waiting. */
    static final class InvalidInput extends RuntimeException {
        InvalidInput(String message) {
            super(message);
        }
    }

    /** Requests that come within this time of each other go out in one round (llm_query_batched asks in parallel). */
    static final long QUIET_NANOS = TimeUnit.MILLISECONDS.toNanos(30);
    /** In a request's {@code _meta}: the key its answer is to come by (a handler that knows what its client sends). */
    static final String KEY = "dev.rlmmcp/inputKey";

    private static final TypeRef<Map<String, Object>> MAP = new TypeRef<>() {};
    private static final Consumer<McpSchema.JSONRPCMessage> IGNORED = message -> {};

    private final String id;
    private final McpStreamableServerSession session;
    private final McpJsonMapper mapper;
    private final ServedRequests.Served served;
    private final Map<String, Asked> open = new LinkedHashMap<>();
    private final Set<String> keys = new HashSet<>();
    private McpSchema.JSONRPCResponse answer;
    private RuntimeException failure;
    private boolean ended;
    private Consumer<McpSchema.JSONRPCMessage> listener = IGNORED;
    /** Whether a round is under way: one request at a time may resume the call. */
    private boolean attended = true;

    private long askedAt;
    private long lastRoundAt = System.nanoTime();
    private int round;
    private Instant changedAt = Instant.now();
    /** Hears every change of what the call asks, answers or has ended with (a task's status notifications). */
    private volatile Runnable onChange = () -> {};

    ResumableCall(String id, McpStreamableServerSession session, McpJsonMapper mapper, ServedRequests.Served served) {
        super(mapper);
        this.id = id;
        this.session = session;
        this.mapper = mapper;
        this.served = served;
    }

    String id() {
        return id;
    }

    /** The rounds answered so far: the request state of the next one names it. */
    synchronized int round() {
        return round;
    }

    /** Takes the next round for the request whose state names round {@code n}; false if it is not the next or is taken. */
    synchronized boolean claim(int n) {
        if (attended || n != round) {
            return false;
        }
        attended = true;
        return true;
    }

    ServedRequests.Served served() {
        return served;
    }

    /**
     * Serves {@code call} on a thread of {@code threads}, using the default REPL session of {@code connection};
     * {@code notifications} hears what it says until the first round's {@link #await} ends.
     */
    void start(
            McpSchema.JSONRPCRequest call,
            String connection,
            Executor threads,
            Consumer<McpSchema.JSONRPCMessage> notifications) {
        synchronized (this) {
            listener = notifications;
        }
        threads.execute(() -> {
            try {
                served.carrying(session.responseStream(call, this), connection).block();
            } catch (RuntimeException e) {
                synchronized (this) {
                    failure = e;
                }
            } finally {
                served.close();
                synchronized (this) {
                    ended = true;
                    changedAt = Instant.now();
                    notifyAll();
                }
                onChange.run();
            }
        });
    }

    /**
     * Hands the handler the answers in {@code given} (by key; keys it did not ask are ignored), then waits
     * for the call to answer or to ask something more, or until {@code deadline} ({@link System#nanoTime}),
     * when it is still {@link Running}; {@code notifications} hears what the call says meanwhile. Throws
     * {@link InvalidInput}, having handed over nothing, if an answer does not fit its request.
     */
    Outcome await(Map<String, Object> given, Consumer<McpSchema.JSONRPCMessage> notifications, long deadline) {
        Map<String, Object> left = new HashMap<>(given);
        synchronized (this) {
            listener = notifications;
        }
        try {
            while (true) {
                List<Asked> answerable;
                synchronized (this) {
                    answerable = answerable(left);
                    if (answerable.isEmpty()) {
                        Outcome outcome = outcome(deadline);
                        if (outcome != null) {
                            return outcome;
                        }
                        continue;
                    }
                }
                for (Asked asked : answerable) {
                    reply(asked, left.remove(asked.key()), null);
                }
            }
        } finally {
            synchronized (this) {
                listener = IGNORED;
                attended = false;
                lastRoundAt = System.nanoTime();
            }
        }
    }

    /**
     * Hands the handler the answers in {@code given} to what it asks now, without waiting (a task's
     * update); keys it did not ask are ignored. Throws {@link InvalidInput}, having handed over nothing,
     * if an answer does not fit its request.
     */
    void answer(Map<String, Object> given) {
        List<Asked> answerable;
        synchronized (this) {
            answerable = answerable(given);
            changedAt = Instant.now();
        }
        onChange.run();
        for (Asked asked : answerable) {
            reply(asked, given.get(asked.key()), null);
        }
    }

    /** {@code listener} hears each change from now on (see {@link #progress}); its calls hold no lock of the call. */
    void onChange(Runnable listener) {
        onChange = listener;
    }

    /** Under the lock: the open requests {@code given} answers, checked and taken out of {@link #open}. */
    private List<Asked> answerable(Map<String, Object> given) {
        List<Asked> answerable = new ArrayList<>();
        for (Asked asked : open.values()) {
            if (given.containsKey(asked.key())) {
                InputResponses.check(asked, given.get(asked.key()));
                answerable.add(asked);
            }
        }
        answerable.forEach(asked -> open.remove(asked.key()));
        return answerable;
    }

    /** Under the lock: the call's answer, what it waits for once it has been quiet a moment, or that it runs past the deadline; null after a wait. */
    private Outcome outcome(long deadline) {
        if (answer != null) {
            return new Answered(answer);
        }
        if (failure != null) {
            throw failure;
        }
        if (ended) {
            throw new IllegalStateException("the call ended without an answer");
        }
        long now = System.nanoTime();
        long quiet = now - askedAt;
        if (!open.isEmpty() && quiet >= QUIET_NANOS) {
            round++;
            return new Waiting(List.copyOf(open.values()));
        }
        if (now - deadline >= 0) {
            return new Running();
        }
        long waitNanos =
                Math.min(deadline - now, open.isEmpty() ? TimeUnit.MILLISECONDS.toNanos(100) : QUIET_NANOS - quiet);
        try {
            wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(waitNanos)));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while the call ran");
        }
        return null;
    }

    /** Where the call stands, for a task: its answer or failure once it has ended, else what it asks (once quiet). */
    synchronized Progress progress() {
        boolean asking = !open.isEmpty() && System.nanoTime() - askedAt >= QUIET_NANOS;
        RuntimeException failed = failure != null
                ? failure
                : ended && answer == null ? new IllegalStateException("the call ended without an answer") : null;
        return new Progress(answer, failed, asking ? List.copyOf(open.values()) : List.of(), changedAt);
    }

    /** A task's view of its call: {@code answer} or {@code failure} once ended; {@code asked}: what it waits for. */
    record Progress(McpSchema.JSONRPCResponse answer, RuntimeException failure, List<Asked> asked, Instant changedAt) {}

    /** Whether no round has been under way for {@code nanos}: its client has not come back. */
    synchronized boolean unattendedFor(long nanos) {
        return !attended && System.nanoTime() - lastRoundAt > nanos;
    }

    /**
     * Gives up on the client's answers: each request the handler asked fails with {@code why}, so that it
     * stops waiting (an llm_query raises) and the call goes on to its end.
     */
    void abandon(String why) {
        List<Asked> asked;
        synchronized (this) {
            asked = List.copyOf(open.values());
            open.clear();
        }
        for (Asked a : asked) {
            reply(a, null, why);
        }
    }

    /** Stops the call as a client's cancellation does (a REPL step is interrupted), its asks failed with {@code why}. */
    void cancel(String why) {
        abandon(why);
        served.context().cancel();
    }

    private void reply(Asked asked, Object result, String error) {
        McpSchema.JSONRPCResponse response = error == null
                ? new McpSchema.JSONRPCResponse(McpSchema.JSONRPC_VERSION, asked.id(), result, null)
                : McpSchema.JSONRPCResponse.error(
                        asked.id(),
                        new McpSchema.JSONRPCResponse.JSONRPCError(McpSchema.ErrorCodes.INTERNAL_ERROR, error, null));
        try {
            session.accept(response).block();
        } catch (RuntimeException e) {
            // the handler stopped waiting for it (its own time limit): nothing to hand over
        }
    }

    @Override
    protected void deliver(McpSchema.JSONRPCMessage message) {
        Consumer<McpSchema.JSONRPCMessage> hearing;
        synchronized (this) {
            switch (message) {
                case McpSchema.JSONRPCResponse response -> {
                    answer = response;
                    changedAt = Instant.now();
                    notifyAll();
                    hearing = null;
                }
                case McpSchema.JSONRPCRequest request -> {
                    Map<String, Object> params = request.params() == null
                            ? new LinkedHashMap<>()
                            : new LinkedHashMap<>(mapper.convertValue(request.params(), MAP));
                    String key = key(request.method(), params);
                    open.put(key, new Asked(key, request.id(), request.method(), params));
                    askedAt = System.nanoTime();
                    changedAt = Instant.now();
                    notifyAll();
                    hearing = null;
                }
                default -> hearing = listener;
            }
        }
        if (hearing == null) {
            onChange.run();
        } else {
            hearing.accept(message);
        }
    }

    /**
     * A key unique in this call: the one the handler asked for in the request's {@code _meta}
     * ({@link #KEY}, taken out), else a readable one: sampling-1, elicitation-2, roots-3.
     */
    private String key(String method, Map<String, Object> params) {
        String wanted = null;
        if (params.get("_meta") instanceof Map<?, ?> meta && meta.get(KEY) instanceof String hint) {
            Map<Object, Object> rest = new LinkedHashMap<>(meta);
            rest.remove(KEY);
            if (rest.isEmpty()) {
                params.remove("_meta");
            } else {
                params.put("_meta", rest);
            }
            wanted = hint;
        }
        String kind = switch (method) {
            case McpSchema.METHOD_SAMPLING_CREATE_MESSAGE -> "sampling";
            case McpSchema.METHOD_ELICITATION_CREATE -> "elicitation";
            case McpSchema.METHOD_ROOTS_LIST -> "roots";
            default -> "input";
        };
        String key = wanted != null && keys.add(wanted) ? wanted : null;
        for (int n = keys.size() + 1; key == null; n++) {
            key = keys.add(kind + "-" + n) ? kind + "-" + n : null;
        }
        return key;
    }
}
