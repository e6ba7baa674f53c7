package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/** The kernel's answer to {@link KernelRequest.Detach}: nothing to tell. */
@JsonIgnoreProperties(ignoreUnknown = true)
public record Detached() {}
