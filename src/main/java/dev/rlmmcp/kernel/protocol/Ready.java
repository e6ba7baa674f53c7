package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.LinkedHashSet;
import java.util.Set;

/**
 * The kernel harness's first frame: {@code {"ready": true, "pid", "python", "protocol", "reserved"}}, its
 * pid in its own namespace (-1 if it named none), its Python version, the protocol version it speaks
 * (0 for a harness from before versions were named) and the names it reserves in the user namespace.
 */
public record Ready(long pid, String python, int protocol, Set<String> reserved) {

    /** The protocol version this server speaks; the harness names its own as PROTOCOL_VERSION (rlm_harness.protocol). */
    public static final int PROTOCOL = 1;

    public Ready {
        python = python == null ? "" : python;
        reserved = Set.copyOf(reserved);
    }

    /** The ready frame's header read leniently: a missing field is -1, "", 0 or no names. */
    public static Ready of(ObjectNode header) {
        Set<String> names = new LinkedHashSet<>();
        for (JsonNode name : header.path("reserved")) {
            if (name.isTextual()) {
                names.add(name.asText());
            }
        }
        return new Ready(
                header.path("pid").asLong(-1),
                header.path("python").asText(""),
                header.path("protocol").asInt(0),
                names);
    }

    /** True if the harness speaks this server's protocol. */
    public boolean compatible() {
        return protocol == PROTOCOL;
    }

    /** Why a harness of another protocol cannot serve, naming both versions. */
    public String mismatch() {
        return "the kernel harness speaks protocol " + protocol + (protocol == 0 ? " (it named none)" : "")
                + ", this server speaks protocol " + PROTOCOL;
    }
}
