package dev.rlmmcp.core;

import dev.rlmmcp.base.CallContext;
import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import dev.rlmmcp.llm.PendingCalls;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session's steps whose sub-calls the calling agent answers. Such a step runs on a thread of its own,
 * so that the call that started it returns as soon as the step waits for the agent: the reply lists the
 * pending calls while the kernel keeps the step's stack and variables, and the step's clock stands still.
 * The agent's answers let the step go on, and the call that gives the last one waits for the rest of the
 * step (which may suspend again). While the step waits, other calls on the session are refused at once,
 * naming the pending ids, instead of waiting for the session's lock until their time runs out.
 *
 * <p>A marker file lives beside the session's state while a step is suspended: if the server stops then,
 * the step is lost with its kernel, and the session's next reply says so.
 */
public final class AgentSteps {

    private static final Logger log = LoggerFactory.getLogger(AgentSteps.class);

    private final String sessionId;
    private final PendingCalls calls = new PendingCalls();
    /** Where a suspended step is marked (null: nowhere, a session kept in memory only). */
    private final Path marker;
    /** The step running, or ended and not yet told to any call; null when there is none. */
    private Flight flight;
    /** Set at start-up when the marker was found: a step was suspended when the server last stopped. */
    private String lostAtStop;

    private static final class Flight {
        final CallContext context = CallContext.create();
        final StringBuilder shown = new StringBuilder();
        StepResult result;
        RuntimeException failure;
        boolean ended;
        boolean marked;
        /** The server stops while the step waits: it is lost, and its marker stays. */
        boolean lost;
    }

    AgentSteps(String sessionId, Path markers) {
        this.sessionId = sessionId;
        this.marker = markers == null ? null : markers.resolve(sessionId);
        calls.listen(this::changed);
        if (marker != null && Files.exists(marker)) {
            try {
                lostAtStop = Files.readString(marker, StandardCharsets.UTF_8).strip();
                Files.deleteIfExists(marker);
            } catch (IOException e) {
                lostAtStop = "";
            }
        }
    }

    public PendingCalls calls() {
        return calls;
    }

    /**
     * Runs {@code step}, given a call context of the step's own (cancelled when the waiting caller is), on a
     * thread of its own, and waits until it ends or waits for the agent.
     */
    public StepOutcome run(Function<CallContext, StepResult> step, CallContext caller) {
        Flight f = new Flight();
        synchronized (this) {
            RlmException refused = refusal();
            if (refused != null) {
                throw refused;
            }
            flight = f;
        }
        Thread.ofVirtual().name("rlm-step-" + sessionId).start(() -> {
            StepResult result = null;
            RuntimeException failure = null;
            try {
                result = step.apply(f.context);
            } catch (RuntimeException e) {
                failure = e;
            }
            ended(f, result, failure);
        });
        return await(f, caller);
    }

    /** The rest of the suspended step, once the agent has answered: waits until it ends or waits again. */
    public StepOutcome resume(CallContext caller) {
        Flight f;
        synchronized (this) {
            f = flight;
        }
        if (f == null) {
            throw nothingPending();
        }
        return await(f, caller);
    }

    /** Without waiting: the step suspended now, the step that ended since (told once), or null for neither. */
    public synchronized StepOutcome now() {
        Flight f = flight;
        if (f == null) {
            return null;
        }
        if (f.ended) {
            return claim(f);
        }
        List<PendingCalls.Call> open = calls.open();
        return open.isEmpty() ? null : suspended(f, open);
    }

    private StepOutcome.Suspended suspended(Flight f, List<PendingCalls.Call> open) {
        String printed = calls.takePrinted();
        f.shown.append(printed);
        return new StepOutcome.Suspended(sessionId, open, printed);
    }

    /** What a step suspended when the server last stopped was waiting for (told once), or null. */
    public synchronized String takeLostAtStop() {
        String lost = lostAtStop;
        lostAtStop = null;
        return lost;
    }

    /**
     * The refusal a call on this session gets while a step waits for the agent (it would otherwise wait
     * for the session's lock), or null.
     */
    synchronized RlmException refusal() {
        if (flight == null || flight.ended) {
            return null;
        }
        List<PendingCalls.Call> open = calls.open();
        if (open.isEmpty()) {
            return null;
        }
        return new RlmException(
                ErrorCode.STEP_SUSPENDED,
                "session " + sessionId + " has a step suspended until you answer its sub-calls "
                        + open.stream().map(PendingCalls.Call::id).collect(Collectors.joining(", "))
                        + "; this call did not run",
                "session_id",
                "answer them with rlm_answer(session_id=\"" + sessionId + "\", answers=[{\"id\": ..., \"text\": ...}]) "
                        + "(read a prompt with rlm_pending), give them up with rlm_answer(cancel=true), or use "
                        + "another session");
    }

    /**
     * As the server stops: whether a step waits for the agent now. If so, that step is lost with its kernel
     * (nothing waits for its lock, its marker stays for the next start to tell), rather than holding the stop.
     */
    static boolean notSuspendedAtStop(Session session) {
        return !session.agentSteps().stoppingWhileSuspended();
    }

    boolean stoppingWhileSuspended() {
        synchronized (this) {
            if (flight == null || flight.ended || calls.open().isEmpty()) {
                return false;
            }
            flight.lost = true;
        }
        log.info("session {}: its step waiting for the agent's answers is lost with this stop", sessionId);
        return true;
    }

    private StepOutcome await(Flight f, CallContext caller) {
        try (CallContext.Registration cancel = caller.onCancel(f.context::cancel)) {
            synchronized (this) {
                while (true) {
                    if (f.ended) {
                        return claim(f);
                    }
                    List<PendingCalls.Call> open = calls.open();
                    if (!open.isEmpty()) {
                        mark(f, open);
                        return suspended(f, open);
                    }
                    wait();
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new RlmException(
                    ErrorCode.INTERRUPTED,
                    "the server stopped waiting for session " + sessionId + "'s step",
                    null,
                    "rlm_pending shows where the step is");
        }
    }

    private StepOutcome claim(Flight f) {
        if (flight == f) {
            flight = null;
        }
        if (f.failure != null) {
            throw f.failure;
        }
        return new StepOutcome.Done(f.result, null, f.shown.toString());
    }

    private void ended(Flight f, StepResult result, RuntimeException failure) {
        synchronized (this) {
            // The marker goes before anyone is told the step ended, so a caller that saw the end never sees it.
            if (f.marked && !f.lost) {
                try {
                    Files.deleteIfExists(marker);
                } catch (IOException e) {
                    log.warn("session {}: could not remove {}: {}", sessionId, marker, e.toString());
                }
            }
            f.result = result;
            f.failure = failure;
            f.ended = true;
            notifyAll();
        }
    }

    private synchronized void changed() {
        notifyAll();
    }

    /** Marks the step as suspended (under this object's lock), once. */
    private void mark(Flight f, List<PendingCalls.Call> open) {
        if (f.marked || marker == null) {
            return;
        }
        try {
            Files.createDirectories(marker.getParent());
            Files.writeString(marker, open.stream().map(PendingCalls.Call::id).collect(Collectors.joining(", ")));
            f.marked = true;
        } catch (IOException e) {
            log.warn("session {}: could not mark its suspended step at {}: {}", sessionId, marker, e.toString());
        }
    }

    private RlmException nothingPending() {
        String lost = takeLostAtStop();
        return new RlmException(
                ErrorCode.NOT_FOUND,
                lost != null
                        ? "session " + sessionId + " has no step waiting for answers: the step that waited for "
                                + (lost.isEmpty() ? "your answers" : lost) + " was lost when the server stopped "
                                + "(its variables are as the step before it left them)"
                        : "session " + sessionId + " has no step waiting for answers",
                "session_id",
                "run the step again with rlm_execute");
    }
}
