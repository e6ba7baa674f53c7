package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;
import java.util.Map;

/**
 * A snapshot attached to a fresh kernel: functions, classes and imports {@code restored} at once,
 * the other variables {@code spilled} (loaded on first use), and what failed to come back:
 * {@code unwritten} names the variables whose value a reply had reported but whose write a stop cut
 * short (an earlier value of some may have come back).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Restored(
        long generation,
        String savedAt,
        List<String> restored,
        List<String> spilled,
        Map<String, String> failed,
        double durationMs,
        MemoryUse memory,
        List<String> unwritten) {

    public Restored {
        restored = restored == null ? List.of() : restored;
        spilled = spilled == null ? List.of() : spilled;
        unwritten = unwritten == null ? List.of() : unwritten;
    }
}
