package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/** The size of a kernel's variables against its limit; the resident size only when asked for it. */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record MemoryUse(
        long totalBytes,
        String totalHuman,
        int variableCount,
        int spilledCount,
        long limitBytes,
        double percent,
        String limitHuman,
        Long rssBytes,
        String rssHuman) {}
