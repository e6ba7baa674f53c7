package dev.rlmmcp.core;

import dev.rlmmcp.data.Transfer;
import java.util.List;

/**
 * A load into a variable: what the kernel stored, the file it read ({@code path} as the caller
 * named it and its size) or the download it streamed ({@code transfer}), the guardrail it tripped,
 * what a durable reply could not save, what is still being written and what a stop of the server
 * lost (see {@link StepResult}), and a kernel found dead and replaced before it ran.
 */
public record LoadResult(
        String sessionId,
        LoadedVar loaded,
        String path,
        Long fileBytes,
        Transfer transfer,
        GuardrailStop guardrail,
        List<String> notSaved,
        List<String> stillWriting,
        List<String> lostAtStop,
        KernelLoss replacedBefore) {}
