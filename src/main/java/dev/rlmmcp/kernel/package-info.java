/**
 * Python kernels for sessions: how many may run and how much they may hold ({@link
 * dev.rlmmcp.kernel.KernelBudget}), the warm ones started ahead of need, and how this host runs them
 * ({@link dev.rlmmcp.kernel.HostPolicy}, decided once at start).
 *
 * <p>Entry type: {@link dev.rlmmcp.kernel.KernelFactory}, which starts a kernel for a session and hands
 * back its {@link dev.rlmmcp.kernel.channel.Kernel}. Its settings are {@link dev.rlmmcp.kernel.Settings}.
 *
 * <p>May use its subpackages (channel, process, protocol) and {@code dev.rlmmcp.base}; only core, the
 * command line's wiring and llm's callback interface use it in turn.
 */
package dev.rlmmcp.kernel;
