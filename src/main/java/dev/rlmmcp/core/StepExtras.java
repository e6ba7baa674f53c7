package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.JsonNode;
import dev.rlmmcp.llm.LlmBackend;
import java.util.function.Supplier;

/**
 * What a step's code may call besides the kernel, and what the step reports back:
 * <ul>
 * <li>{@code clientSampling}: the calling client's MCP sampling (null if none), for the server's choice
 * of backend for llm_query; or {@code llm}, a backend chosen (and metered) by an RLM run, with
 * {@code depth}, the depth of the RLM whose code this is;</li>
 * <li>{@code callbacks}: the other kinds of request the code may make (rlm, mcp);</li>
 * <li>{@code mcp}: the bridged MCP servers to set up before the code runs (or null);</li>
 * <li>{@code loopAnswer}: the kernel reports the {@code answer} dict of the RLM answer protocol;</li>
 * <li>{@code rlm}: asked once the step is over, the child RLMs it ran, for its trace entry (or null).</li>
 * </ul>
 */
public record StepExtras(
        LlmBackend clientSampling,
        LlmBackend llm,
        int depth,
        HostCallbacks callbacks,
        BridgeSetup mcp,
        boolean loopAnswer,
        Supplier<JsonNode> rlm) {

    public static final StepExtras NONE = of(null, HostCallbacks.NONE, null);

    /** An agent's own step: the server picks the llm_query backend. */
    public static StepExtras of(LlmBackend clientSampling, HostCallbacks callbacks, BridgeSetup mcp) {
        return new StepExtras(clientSampling, null, 0, callbacks, mcp, false, null);
    }

    public StepExtras withRlm(HostCallbacks callbacks, Supplier<JsonNode> rlm) {
        return new StepExtras(clientSampling, llm, depth, callbacks, mcp, loopAnswer, rlm);
    }
}
