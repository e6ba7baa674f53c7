/**
 * The kernel wire protocol's messages as records: the requests the server sends ({@link
 * dev.rlmmcp.kernel.protocol.KernelRequest}, each naming its reply type), and the harness's replies
 * ({@link dev.rlmmcp.kernel.protocol.ExecResult}, {@link dev.rlmmcp.kernel.protocol.Ready} and the rest).
 *
 * <p>Entry type: {@link dev.rlmmcp.kernel.protocol.KernelRequest}.
 *
 * <p>Uses nothing of the project: plain records that Jackson reads and writes. Core is the only layer
 * above the kernel that sees them.
 */
package dev.rlmmcp.kernel.protocol;
