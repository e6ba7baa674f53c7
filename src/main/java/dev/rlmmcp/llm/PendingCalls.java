package dev.rlmmcp.llm;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;

/**
 * The sub-calls a session's step waits on the agent to answer, when the agent is the model: each has an
 * id the agent answers by, its kind ({@code llm}: a prompt; {@code rlm}: a prompt and a child session
 * made for it), and a future the step waits on. A step asks a batch at once, so the agent sees every
 * request of an {@code llm_query_batched} together. The listener hears of every change, outside this
 * object's lock, so that whoever waits on the step may hold its own lock while it asks what is open.
 */
public final class PendingCalls {

    /** One request the agent is to answer; {@code childSession} is the session made for an rlm request. */
    public record Call(String id, String kind, String prompt, String system, String childSession, Instant asked) {

        public int chars() {
            return prompt.length() + (system == null ? 0 : system.length());
        }

        /** The prompt's first {@code max} characters on one line. */
        public String preview(int max) {
            String line = prompt.strip().replaceAll("\\s+", " ");
            return line.length() <= max ? line : line.substring(0, max) + "…";
        }
    }

    /** What a step asks: a prompt, its system prompt (or null), and for an rlm request the child session's id. */
    public record Asked(String prompt, String system, String childSession) {}

    /** A call asked: its id, and the answer's text when it comes (a refusal completes it with an {@link LlmException}). */
    public record Ticket(String id, CompletableFuture<String> answer) {}

    private record Open(Call call, CompletableFuture<String> answer) {}

    private final Map<String, Open> open = new LinkedHashMap<>();
    private final StringBuilder printed = new StringBuilder();
    private int next;
    private volatile Runnable listener = () -> {};

    /** Hears of every call asked, answered or dropped (one listener: the step's waiter). */
    public void listen(Runnable onChange) {
        this.listener = onChange;
    }

    /** Asks a batch of one kind at once; {@code printedSoFar} is what the step printed since it last asked. */
    public List<Ticket> ask(String kind, List<Asked> batch, String printedSoFar) {
        List<Ticket> tickets = new ArrayList<>();
        synchronized (this) {
            if (printedSoFar != null) {
                printed.append(printedSoFar);
            }
            Instant now = Instant.now();
            for (Asked a : batch) {
                String id = "q" + (++next);
                CompletableFuture<String> answer = new CompletableFuture<>();
                open.put(id, new Open(new Call(id, kind, a.prompt(), a.system(), a.childSession(), now), answer));
                tickets.add(new Ticket(id, answer));
            }
        }
        listener.run();
        return tickets;
    }

    /** The calls not answered yet, in the order asked. */
    public synchronized List<Call> open() {
        return open.values().stream().map(Open::call).toList();
    }

    public synchronized Optional<Call> call(String id) {
        Open o = open.get(id);
        return o == null ? Optional.empty() : Optional.of(o.call());
    }

    /** Answers a call; false if no call with that id is open. */
    public boolean answer(String id, String text) {
        return complete(id, text, null);
    }

    /** Refuses a call: the code's llm_query (or rlm_query) raises with {@code code}; false if it is not open. */
    public boolean refuse(String id, String code, String message) {
        return complete(id, null, new LlmException(code, message));
    }

    /** Refuses every open call (the agent cancels them, or the server stops); how many there were. */
    public int refuseAll(String code, String message) {
        List<String> ids;
        synchronized (this) {
            ids = List.copyOf(open.keySet());
        }
        ids.forEach(id -> refuse(id, code, message));
        return ids.size();
    }

    private boolean complete(String id, String text, LlmException refusal) {
        Open o;
        synchronized (this) {
            o = open.remove(id);
        }
        if (o == null) {
            return false;
        }
        if (refusal != null) {
            o.answer().completeExceptionally(refusal);
        } else {
            o.answer().complete(text);
        }
        listener.run();
        return true;
    }

    /** Forgets a call whose step no longer waits for it (given up, or the step ended). */
    public void drop(String id) {
        Open o;
        synchronized (this) {
            o = open.remove(id);
        }
        if (o != null) {
            o.answer().cancel(false);
            listener.run();
        }
    }

    /** What the step printed since this was last asked, once. */
    public synchronized String takePrinted() {
        String text = printed.toString();
        printed.setLength(0);
        return text;
    }
}
