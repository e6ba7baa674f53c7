package dev.rlmmcp.kernel.channel;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** One message on the kernel pipe: a JSON header and an optional raw payload. */
public record Frame(ObjectNode header, byte[] payload) {

    static final byte[] NO_PAYLOAD = new byte[0];

    public Frame(ObjectNode header) {
        this(header, NO_PAYLOAD);
    }
}
