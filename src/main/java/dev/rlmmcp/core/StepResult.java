package dev.rlmmcp.core;

import dev.rlmmcp.kernel.protocol.ExecResult;
import dev.rlmmcp.llm.LlmUsage;
import java.time.Duration;
import java.util.List;

/**
 * One code step of a session: what the code did ({@code exec}; null if its kernel was lost during
 * it, then {@code loss} says how), its index, how long it was let run and whether it was interrupted,
 * what its llm_query calls used, the guardrail it tripped, what a durable reply could not save, and
 * a kernel found dead and replaced before the step ran.
 */
public record StepResult(String sessionId, StepStatus status, Integer step, ExecResult exec, Duration timeout,
        long interruptedAfterMs, LlmUsage llmUsage, GuardrailStop guardrail, List<String> notSaved, KernelLoss loss,
        KernelLoss replacedBefore) {
}
