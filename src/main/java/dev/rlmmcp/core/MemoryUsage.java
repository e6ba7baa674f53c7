package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/** What a session's variables take in its kernel, against the kernel's memory limit, and the process's resident size. */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record MemoryUsage(
        long totalBytes,
        String totalHuman,
        int variableCount,
        int spilledCount,
        long limitBytes,
        double percent,
        String limitHuman,
        Long rssBytes,
        String rssHuman) {}
