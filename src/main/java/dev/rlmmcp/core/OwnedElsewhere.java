package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.rlmmcp.llm.LlmLimits;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A session of the cluster that this node does not run, as rlm_sessions lists it: its summary read
 * from its record in the cluster database, and the node that owns it ({@code ownerNode} null: none
 * does, it is resumed wherever it is called next; {@code ownerLive} false: its owner is gone).
 */
public record OwnedElsewhere(SessionSummary summary, String ownerNode, boolean ownerLive) {

    private static final Logger log = LoggerFactory.getLogger(OwnedElsewhere.class);

    /** The listed sessions not in {@code local}, those without a record yet (just created) left out. */
    static List<OwnedElsewhere> of(
            List<Ownership.Elsewhere> listed,
            Set<String> local,
            ObjectMapper json,
            LlmLimits llmDefaults,
            Duration defaultTimeout) {
        List<OwnedElsewhere> found = new ArrayList<>();
        for (Ownership.Elsewhere e : listed) {
            if (local.contains(e.sessionId()) || e.record() == null) {
                continue;
            }
            try {
                SessionRecord record = SessionRecords.read(json, e.sessionId(), e.record(), llmDefaults);
                SessionSummary summary = SessionSummary.of(record, 0, 0, 0, false, true, null, defaultTimeout);
                found.add(new OwnedElsewhere(summary, e.ownerNode(), e.live()));
            } catch (IOException | RuntimeException ex) {
                log.debug("session {} of the cluster: its record is unreadable: {}", e.sessionId(), ex.toString());
            }
        }
        return found;
    }
}
