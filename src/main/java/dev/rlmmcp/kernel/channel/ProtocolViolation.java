package dev.rlmmcp.kernel.channel;

import java.io.IOException;

/** The kernel wrote something on its pipe that the protocol does not allow (a frame too large, not JSON). */
final class ProtocolViolation extends IOException {

    ProtocolViolation(String message) {
        super(message);
    }
}
