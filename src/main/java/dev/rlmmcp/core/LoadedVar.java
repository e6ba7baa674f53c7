package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/**
 * A variable a load made: its Python type and the data type it was parsed as, its size, a preview,
 * how long the kernel took, what the memory policy moved out for it, the memory after it, and its
 * length or columns where it has them.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record LoadedVar(
        String name,
        String type,
        String dataType,
        long sizeBytes,
        String sizeHuman,
        String preview,
        double durationMs,
        List<Eviction> evicted,
        MemoryUsage memory,
        Long length,
        List<String> columns) {}
