/**
 * The framed pipe to one running kernel: requests written, frames read ({@code FramePump}), matched
 * to their calls ({@code Calls}), each call under a time limit ({@code Watchdog}), and the kernel's
 * callbacks to the server (llm_query, MCP calls) served while a call runs. The kernel is not trusted:
 * every frame is bounded before it is read, and a kernel that breaks the protocol is killed.
 *
 * <p>Entry type: {@link dev.rlmmcp.kernel.channel.Kernel}; its answers are {@link
 * dev.rlmmcp.kernel.channel.KernelReply} or a {@link dev.rlmmcp.kernel.channel.KernelDiedException}.
 *
 * <p>May use {@code dev.rlmmcp.kernel.process} (the kernel's OS process), {@code
 * dev.rlmmcp.kernel.protocol} (the messages) and {@code dev.rlmmcp.base}.
 */
package dev.rlmmcp.kernel.channel;
