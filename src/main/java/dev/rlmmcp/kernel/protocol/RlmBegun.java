package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** The harness's reply to {@link KernelRequest.RlmBegin}: {@code answer} is set, and nothing more to say. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record RlmBegun() {}
