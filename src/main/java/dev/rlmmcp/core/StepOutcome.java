package dev.rlmmcp.core;

import dev.rlmmcp.llm.PendingCalls;
import java.util.List;

/**
 * What a call that runs a step gets back: the step's result, or, where the calling agent answers the
 * step's sub-calls, the step suspended in its kernel with the calls it waits for.
 */
public sealed interface StepOutcome {

    /**
     * The step ended. {@code notice}, if not null, is what the reply must also say (a step lost at a stop);
     * {@code shown}, what earlier replies of a suspended step already showed of its output.
     */
    record Done(StepResult result, String notice, String shown) implements StepOutcome {

        public Done(StepResult result) {
            this(result, null, "");
        }

        public Done(StepResult result, String notice) {
            this(result, notice, "");
        }
    }

    /**
     * The step waits, its kernel and variables as they are, for the agent to answer {@code pending}
     * (rlm_answer); {@code printed} is what it printed since the agent last saw it.
     */
    record Suspended(String sessionId, List<PendingCalls.Call> pending, String printed) implements StepOutcome {}
}
