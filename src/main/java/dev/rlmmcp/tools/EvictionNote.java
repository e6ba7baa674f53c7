package dev.rlmmcp.tools;

import dev.rlmmcp.base.Bytes;
import dev.rlmmcp.core.Eviction;
import dev.rlmmcp.core.KernelSettings;
import java.util.List;

/** Tells the agent, in a reply's {@code memory_note}, which variables the kernel moved out of memory and why. */
final class EvictionNote {

    private EvictionNote() {}

    /** The note for what a step or load evicted; null if nothing was. */
    static String of(List<Eviction> evicted, KernelSettings settings) {
        if (evicted == null || evicted.isEmpty()) {
            return null;
        }
        StringBuilder spilled = new StringBuilder();
        StringBuilder dropped = new StringBuilder();
        long bytes = 0;
        for (Eviction v : evicted) {
            StringBuilder names = v.spilled() ? spilled : dropped;
            names.append(names.isEmpty() ? "" : ", ").append(v.name());
            if (!v.spilled() && v.reason() != null) {
                names.append(" (").append(v.reason()).append(")");
            }
            bytes += v.sizeBytes();
        }
        String note =
                "memory passed %d%% of the %s limit, so the least recently used variables were moved out to get under %d%% (%s)."
                        .formatted(
                                Math.round(settings.cleanupThreshold() * 100),
                                Bytes.human(settings.memoryLimitBytes()),
                                Math.round(settings.cleanupTarget() * 100),
                                Bytes.human(bytes));
        if (!spilled.isEmpty()) {
            note += " Spilled to disk: " + spilled + "; code that uses them loads them back by itself.";
        }
        if (!dropped.isEmpty()) {
            note += " Dropped: " + dropped + ". They are gone; reload them if needed.";
        }
        return note;
    }
}
