package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/** A value a load stored: its Python type, size, preview and shape (length, csv columns). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Loaded(
        String name,
        String type,
        String dataType,
        long sizeBytes,
        String sizeHuman,
        String preview,
        double durationMs,
        List<Evicted> evicted,
        MemoryUse memory,
        Long length,
        List<String> columns) {

    public Loaded {
        evicted = evicted == null ? List.of() : evicted;
    }
}
