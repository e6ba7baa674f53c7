package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The kernel's answer to one request. {@code interruptedAfterMs} is set when the call ran past its
 * timeout and the kernel stopped on the interrupt (variables intact); it is -1 otherwise.
 */
public record KernelReply(ObjectNode body, long interruptedAfterMs) {

    public boolean ok() {
        return body.path("ok").asBoolean(false);
    }

    public boolean interrupted() {
        return interruptedAfterMs >= 0;
    }
}
