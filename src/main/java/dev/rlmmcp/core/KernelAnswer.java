package dev.rlmmcp.core;

import java.util.List;

/**
 * A session's kernel's answer to a request that is not a step: its {@code body}, what a durable
 * reply could not save (null unless asked), what is still being written and what a stop of the
 * server lost (see {@link StepResult}), and a kernel found dead and replaced before it ran.
 */
public record KernelAnswer<R>(
        String sessionId,
        R body,
        List<String> notSaved,
        List<String> stillWriting,
        List<String> lostAtStop,
        KernelLoss replacedBefore) {}
