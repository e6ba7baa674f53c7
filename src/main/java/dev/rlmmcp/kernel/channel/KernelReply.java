package dev.rlmmcp.kernel.channel;

import dev.rlmmcp.kernel.protocol.Refusal;
import java.util.List;

/**
 * The kernel's answer to one request: its {@code body}, or the {@code refusal} it gave instead.
 * {@code unsaved} lists, after a request that may change variables (with a snapshot directory), every
 * variable changed since the last snapshot; null otherwise. {@code interruptedAfterMs} is set when
 * the call ran past its timeout (or was cancelled) and the kernel stopped on the interrupt (variables
 * intact); it is -1 otherwise.
 */
public record KernelReply<R>(R body, Refusal refusal, List<String> unsaved, long interruptedAfterMs) {

    public boolean ok() {
        return refusal == null;
    }

    public boolean interrupted() {
        return interruptedAfterMs >= 0;
    }
}
