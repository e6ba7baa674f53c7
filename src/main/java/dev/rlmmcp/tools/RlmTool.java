package dev.rlmmcp.tools;

import com.fasterxml.jackson.databind.node.ObjectNode;

/** One MCP tool: its name, description and input schema, and what a call does. */
public interface RlmTool {

    String name();

    String description();

    Schema schema();

    /** Runs the call; refusals are thrown as {@link dev.rlmmcp.base.RlmException}. */
    ObjectNode call(Args args, Caller caller);

    /** Whether the reply describes a failure the agent should see as one (e.g. the code raised). */
    default boolean isError(ObjectNode reply) {
        return false;
    }

    /**
     * Whether the tool works only for a client that samples (MCP sampling), so that it is listed to no other:
     * a tool that could only fail costs every turn of a client's model its schema.
     */
    default boolean needsSampling() {
        return false;
    }

    /** The reply format when a call names none. */
    default ResponseFormat defaultFormat() {
        return ResponseFormat.TEXT;
    }
}
