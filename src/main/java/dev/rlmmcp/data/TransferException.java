package dev.rlmmcp.data;

import dev.rlmmcp.base.ErrorCode;
import dev.rlmmcp.base.RlmException;
import java.io.IOException;

/** A transfer stopped for a reason the agent can act on (a size cap, a timeout), thrown from a stream. */
public final class TransferException extends IOException {

    private final transient RlmException refusal;

    public TransferException(RlmException refusal) {
        super(refusal.getMessage());
        this.refusal = refusal;
    }

    public TransferException(ErrorCode code, String message, String argument, String fix) {
        this(new RlmException(code, message, argument, fix));
    }

    public RlmException refusal() {
        return refusal;
    }
}
