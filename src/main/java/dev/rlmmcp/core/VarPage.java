package dev.rlmmcp.core;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * One page of a variable's rendered value ({@code format} text, json, repr or preview): characters
 * [offset, offset + returnedChars) of totalChars; {@code nextOffset} null on the last page, and
 * always in the reply, so that a reader can tell the last page without counting.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
public record VarPage(
        String varName,
        String type,
        String format,
        long totalChars,
        long offset,
        long returnedChars,
        @JsonInclude(JsonInclude.Include.ALWAYS) Long nextOffset,
        String value,
        String note) {}
