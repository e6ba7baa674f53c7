/**
 * What every layer shares: {@link dev.rlmmcp.base.CallContext} (one client request, handed from the
 * transport down to the kernel: its cancellation and progress), {@link dev.rlmmcp.base.RlmException} with its
 * {@link dev.rlmmcp.base.ErrorCode} (a refusal the agent can act on), and small helpers for bytes, text and
 * file trees. The bottom layer: it uses no other {@code dev.rlmmcp} package.
 */
package dev.rlmmcp.base;
