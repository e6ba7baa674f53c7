package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/** A variable the memory policy moved out of memory: spilled to disk (loaded back on use) or dropped, and why. */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record Eviction(String name, long sizeBytes, String sizeHuman, boolean spilled, String reason) {}
