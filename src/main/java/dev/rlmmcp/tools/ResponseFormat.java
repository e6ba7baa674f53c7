package dev.rlmmcp.tools;

import dev.rlmmcp.core.RlmException;
import java.util.List;

/** How a reply's text content is written: one JSON object (the default) or compact Markdown. */
public enum ResponseFormat {
    JSON, MARKDOWN;

    public static final String ARGUMENT = "response_format";
    public static final List<String> CHOICES = List.of("json", "markdown");

    /** The format a call asked for: absent means json; anything but json or markdown is refused. */
    public static ResponseFormat of(Object value) {
        if (value == null || "json".equals(value)) {
            return JSON;
        }
        if ("markdown".equals(value)) {
            return MARKDOWN;
        }
        throw RlmException.invalid(ARGUMENT, ARGUMENT + " is " + (value instanceof String s ? "'" + s + "'" : value)
                + ", which is not a known format", "pass response_format as \"json\" (the default) or \"markdown\"");
    }
}
