package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/**
 * One variable: {@code status} live (in memory), spilled (in the snapshot, back on use) or lost (not
 * in the snapshot the session was restored from); {@code persisted} pending or saved, or
 * {@code notPersisted} why no snapshot can hold it.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record VarEntry(
        String name,
        String status,
        String type,
        Long sizeBytes,
        String sizeHuman,
        String created,
        String lastAccessed,
        String saved,
        String preview,
        Long length,
        List<String> columns,
        String notPersisted,
        String persisted) {

    /** An entry known only by name (from the trace, no kernel asked). */
    public static VarEntry named(String name) {
        return new VarEntry(name, null, null, null, null, null, null, null, null, null, null, null, null);
    }
}
