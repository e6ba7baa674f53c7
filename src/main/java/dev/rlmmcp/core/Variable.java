package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;
import java.util.List;

/**
 * One variable of a session: in memory, spilled or in the snapshot only ({@code status}), its type,
 * size, when made and last used, a preview, its length or columns where it has them, and whether
 * the snapshot holds it (or why it cannot).
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Variable(
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

    /** A variable known by name only (from the trace, no kernel asked). */
    public static Variable named(String name) {
        return new Variable(name, null, null, null, null, null, null, null, null, null, null, null, null);
    }
}
