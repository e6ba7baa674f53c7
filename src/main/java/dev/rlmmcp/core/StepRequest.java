package dev.rlmmcp.core;

import dev.rlmmcp.base.CallContext;
import java.time.Duration;

/**
 * One code step to run on a session: the code, its time limit (cut to what the session's runtime
 * guardrail leaves), what the code may call besides the kernel ({@link StepExtras}), and the call it
 * runs for (its cancellation and progress).
 */
public record StepRequest(String code, Duration timeout, StepExtras extras, CallContext context) {

    public StepRequest {
        extras = extras == null ? StepExtras.NONE : extras;
        context = context == null ? CallContext.NONE : context;
    }

    /** A plain step: no callbacks, no bridged servers, no call to cancel it. */
    public static StepRequest of(String code, Duration timeout) {
        return new StepRequest(code, timeout, StepExtras.NONE, CallContext.NONE);
    }

    /** This step with other extras (an RLM run adds its child runs). */
    public StepRequest with(StepExtras other) {
        return new StepRequest(code, timeout, other, context);
    }
}
