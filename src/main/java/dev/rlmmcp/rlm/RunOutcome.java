package dev.rlmmcp.rlm;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * How a root run ended: its answer ({@code ready} when the model declared it final; otherwise the
 * best answer so far, which may be null), the limit that stopped it, if one did ({@link StopReason}'s
 * wire name), with a message saying so and how to raise it, and the run's figures.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record RunOutcome(
        String runId, String answer, boolean ready, String stoppedBy, String stopMessage, RunFigures figures) {}
