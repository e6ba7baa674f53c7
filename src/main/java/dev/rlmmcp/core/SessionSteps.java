package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.base.Text;
import dev.rlmmcp.kernel.channel.CallbackException;
import dev.rlmmcp.kernel.channel.KernelCallbacks;
import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.kernel.protocol.KernelRequest;
import dev.rlmmcp.llm.LlmAccount;
import dev.rlmmcp.llm.LlmService;
import dev.rlmmcp.llm.LlmStep;
import dev.rlmmcp.llm.LlmUsage;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;

/**
 * A session's steps: code run in its kernel under its guardrails, with llm_query answered by the backend
 * the request chooses, then counted, recorded in the trace and told as core's own record.
 */
final class SessionSteps {

    private final String id;
    private final Guardrails guardrails;
    private final LlmService llm;
    private final LlmAccount llmAccount;
    private final KernelCalls calls;
    private final SessionLedger ledger;

    SessionSteps(
            String id,
            Guardrails guardrails,
            LlmService llm,
            LlmAccount llmAccount,
            KernelCalls calls,
            SessionLedger ledger) {
        this.id = id;
        this.guardrails = guardrails;
        this.llm = llm;
        this.llmAccount = llmAccount;
        this.calls = calls;
        this.ledger = ledger;
    }

    StepResult execute(StepRequest step) {
        try (var held = calls.enter(step.timeout())) {
            ledger.requireOpen();
            String refused = guardrails.beforeStep();
            if (refused != null) {
                ledger.stop(refused);
                throw ledger.guardrailStop(refused);
            }
            Duration limit = guardrails.stepTimeout(step.timeout());
            StepExtras extras = step.extras();
            long started = System.nanoTime();
            LlmStep llmStep = extras.llm() != null
                    ? llm.step(llmAccount, extras.llm(), extras.depth())
                    : llm.step(llmAccount, extras.clientSampling());
            KernelCallbacks answering = answering(llmStep, WireRecords.callbacks(extras.callbacks()));
            KernelCalls.Ran ran = calls.exec(
                    new KernelRequest.Exec(step.code(), WireRecords.mcp(extras.mcp()), extras.loopAnswer()),
                    limit,
                    answering,
                    step.context());
            return done(step, ran, limit, (System.nanoTime() - started) / 1e6, llmStep);
        }
    }

    /** llm requests to the step's llm_query calls, the others to {@code others}; the clock stands still while the agent answers. */
    private static KernelCallbacks answering(LlmStep llmStep, KernelCallbacks others) {
        return new KernelCallbacks() {
            @Override
            public JsonNode handle(String kind, JsonNode request) throws CallbackException, InterruptedException {
                return "llm".equals(kind) ? llmStep.handle(kind, request) : others.handle(kind, request);
            }

            @Override
            public boolean holdsClock(String kind) {
                return "llm".equals(kind) ? llmStep.answeredByAgent() : others.holdsClock(kind);
            }
        };
    }

    /** A step that ran: counted, recorded, and told as core's record. */
    private StepResult done(StepRequest step, KernelCalls.Ran ran, Duration limit, double ms, LlmStep llmStep) {
        ExecResult exec = ran.exec();
        var accepted = ran.accepted();
        StepStatus status = ran.loss() != null
                ? ran.loss().status()
                : ran.interruptedAfterMs() >= 0
                        ? StepStatus.INTERRUPTED
                        : exec.error() != null ? StepStatus.ERROR : StepStatus.OK;
        long io = Text.utf8Length(step.code())
                + (exec == null ? 0 : Text.utf8Length(exec.stdout()) + Text.utf8Length(exec.stderr()));
        int index = guardrails.steps();
        String tripped = guardrails.afterStep(Math.round(ms), io);
        GuardrailStop guardrail = ledger.settle(index, tripped, exec == null ? null : exec.memory());
        LlmUsage usage = llmStep.usage();
        StepResult result = new StepResult(
                id,
                status,
                index,
                WireRecords.output(exec),
                limit,
                ran.interruptedAfterMs(),
                usage,
                guardrail,
                accepted == null ? null : accepted.notSaved(),
                accepted == null ? null : accepted.stillWriting(),
                accepted == null ? null : accepted.lostAtStop(),
                ran.loss(),
                accepted == null ? null : accepted.replaced());
        List<String> changed = exec == null ? List.of() : exec.variablesChanged();
        Supplier<JsonNode> rlm = step.extras().rlm();
        String unshared = ledger.record(
                index,
                "exec",
                step.code(),
                status.wireName(),
                result.traceOutput(),
                changed,
                ms,
                io,
                tripped,
                usage,
                usage == null ? null : llmStep.calls(),
                rlm == null ? null : rlm.get());
        return unshared == null ? result : result.alsoNotSaved(changed);
    }
}
