package dev.rlmmcp.core;

import dev.rlmmcp.base.Text;
import dev.rlmmcp.llm.LlmUsage;
import java.time.Duration;
import java.util.List;

/**
 * One code step of a session: what the code did ({@code exec}; null if its kernel was lost during
 * it, then {@code loss} says how), its index, how long it was let run and whether it was interrupted,
 * what its llm_query calls used, the guardrail it tripped, what a durable reply could not save, and
 * a kernel found dead and replaced before the step ran. {@code stillWriting} names the variables the
 * step set whose values were too large to write before the reply (they are being written now, and a
 * stop before that ends loses them); {@code lostAtStop}, on a session's first call after the server
 * stopped, those a reply had reported and whose write that stop cut short (null: none).
 */
public record StepResult(
        String sessionId,
        StepStatus status,
        Integer step,
        StepOutput exec,
        Duration timeout,
        long interruptedAfterMs,
        LlmUsage llmUsage,
        GuardrailStop guardrail,
        List<String> notSaved,
        List<String> stillWriting,
        List<String> lostAtStop,
        KernelLoss loss,
        KernelLoss replacedBefore) {

    /** What the agent must know in a sentence: why the step was interrupted, or what its kernel's loss cost; else null. */
    public String message() {
        if (loss != null) {
            return loss.message();
        }
        return status != StepStatus.INTERRUPTED
                ? null
                : "interrupted after %.1f s (timeout %s s, or cancelled by the client); all variables are intact"
                        .formatted(interruptedAfterMs / 1000.0, Text.seconds(timeout));
    }

    /** This result with {@code names} added to what could not be saved (the step did not reach the cluster). */
    StepResult alsoNotSaved(List<String> names) {
        if (names.isEmpty()) {
            return this;
        }
        java.util.Set<String> all = new java.util.LinkedHashSet<>(notSaved == null ? List.of() : notSaved);
        all.addAll(names);
        return new StepResult(
                sessionId,
                status,
                step,
                exec,
                timeout,
                interruptedAfterMs,
                llmUsage,
                guardrail,
                List.copyOf(all),
                stillWriting,
                lostAtStop,
                loss,
                replacedBefore);
    }

    /** What the step's trace entry shows of its output: stdout, the error, and {@link #message()}. */
    String traceOutput() {
        StringBuilder out = new StringBuilder(exec == null ? "" : exec.stdout());
        if (exec != null && exec.error() != null) {
            out.append(out.isEmpty() ? "" : "\n")
                    .append(exec.error().type())
                    .append(": ")
                    .append(exec.error().message());
        }
        String message = message();
        if (message != null) {
            out.append(out.isEmpty() ? "" : "\n").append(message);
        }
        return out.toString();
    }
}
