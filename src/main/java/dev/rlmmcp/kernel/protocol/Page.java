package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.databind.PropertyNamingStrategies;
import com.fasterxml.jackson.databind.annotation.JsonNaming;

/**
 * One page of a variable's rendered value ({@code format} text, json, repr or preview): characters
 * [offset, offset + returnedChars) of totalChars; {@code nextOffset} null on the last page.
 */
@JsonNaming(PropertyNamingStrategies.SnakeCaseStrategy.class)
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonIgnoreProperties(ignoreUnknown = true)
public record Page(
        String varName,
        String type,
        String format,
        long totalChars,
        long offset,
        long returnedChars,
        @JsonInclude(JsonInclude.Include.ALWAYS) Long nextOffset,
        String value,
        String note) {}
