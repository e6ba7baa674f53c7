package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;
import java.util.Map;

/** What a snapshot wrote, left as it was, and could not hold (with why). */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record SnapshotWritten(
        List<String> written,
        List<String> unchanged,
        Map<String, String> notPersisted,
        long bytes,
        double durationMs,
        long generation,
        String savedAt) {

    public SnapshotWritten {
        written = written == null ? List.of() : written;
        notPersisted = notPersisted == null ? Map.of() : notPersisted;
    }
}
