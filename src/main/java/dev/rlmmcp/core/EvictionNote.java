package dev.rlmmcp.core;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.kernel.Settings;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** Tells the agent, in a reply's {@code memory_note}, which variables the kernel moved out of memory and why. */
final class EvictionNote {

    private EvictionNote() {
    }

    static void add(ObjectNode body, Settings settings) {
        JsonNode evicted = body.path("evicted");
        if (!evicted.isArray() || evicted.isEmpty()) {
            return;
        }
        StringBuilder spilled = new StringBuilder();
        StringBuilder dropped = new StringBuilder();
        long bytes = 0;
        for (JsonNode v : evicted) {
            boolean kept = v.path("spilled").asBoolean();
            StringBuilder names = kept ? spilled : dropped;
            names.append(names.isEmpty() ? "" : ", ").append(v.path("name").asText());
            if (!kept && v.has("reason")) {
                names.append(" (").append(v.path("reason").asText()).append(")");
            }
            bytes += v.path("size_bytes").asLong();
        }
        String note = "memory passed %d%% of the %s limit, so the least recently used variables were moved out to get under %d%% (%s)."
                .formatted(Math.round(settings.cleanupThreshold() * 100), Bytes.human(settings.memoryLimitBytes()),
                        Math.round(settings.cleanupTarget() * 100), Bytes.human(bytes));
        if (!spilled.isEmpty()) {
            note += " Spilled to disk: " + spilled + "; code that uses them loads them back by itself.";
        }
        if (!dropped.isEmpty()) {
            note += " Dropped: " + dropped + ". They are gone; reload them if needed.";
        }
        body.put("memory_note", note);
    }
}
