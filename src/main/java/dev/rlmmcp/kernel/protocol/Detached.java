package dev.rlmmcp.kernel.protocol;

/** The kernel's answer to {@link KernelRequest.Detach}: nothing to tell. */
public record Detached() {
}
