/**
 * Sessions: a REPL each, its kernel started on first use, its calls run one at a time, recorded in
 * its trace, counted against its guardrails, and snapshotted to the state store so a new kernel can
 * restore them. {@link dev.rlmmcp.core.Sessions} holds them; {@link dev.rlmmcp.core.Session} is one.
 * {@link dev.rlmmcp.core.Ownership} says which sessions this node may run: all of them on one node, in a
 * cluster only those it holds (implemented by {@code dev.rlmmcp.cluster}, which core does not see).
 * Core is the only layer above the kernel that sees the kernel's types: it maps the kernel's protocol
 * records to its own ({@link dev.rlmmcp.core.StepResult}, {@link dev.rlmmcp.core.StepOutput},
 * {@link dev.rlmmcp.core.KernelAnswer} and the records they carry), so that a change on the wire stops
 * here. It may use kernel, data, llm, store, bridge and base.
 */
package dev.rlmmcp.core;
