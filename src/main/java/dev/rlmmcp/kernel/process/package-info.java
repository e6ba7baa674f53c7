/**
 * Kernel processes: how they are started and isolated (a plain process, bubblewrap, a container),
 * signalled, limited (cgroups, a disk quota on the snapshot directory, a seccomp filter) and watched,
 * and the Python harness and interpreter they run.
 *
 * <p>Entry types: {@link dev.rlmmcp.kernel.process.KernelLauncher} (chosen by {@link
 * dev.rlmmcp.kernel.process.Sandbox}), whose every start returns the kernel's own {@link
 * dev.rlmmcp.kernel.process.KernelHandle}, and {@link dev.rlmmcp.kernel.process.KernelProcess}, one
 * kernel's process as the channel sees it.
 *
 * <p>May use {@code dev.rlmmcp.base} and the JDK's process and file APIs; it knows nothing of the
 * messages on the kernel's pipes.
 */
package dev.rlmmcp.kernel.process;
