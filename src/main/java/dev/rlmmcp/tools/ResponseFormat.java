package dev.rlmmcp.tools;

import dev.rlmmcp.base.RlmException;
import java.util.List;
import java.util.Locale;

/**
 * How a reply's text content is written: text made for a model (what the code printed, a short
 * traceback, a one-line footer of what changed), one JSON object, compact Markdown, or TOON.
 */
public enum ResponseFormat {
    TEXT,
    JSON,
    MARKDOWN,
    TOON;

    public static final String ARGUMENT = "response_format";
    public static final List<String> CHOICES = List.of("text", "json", "markdown", "toon");

    /** The format a call asked for: absent means the tool's default; anything unknown is refused. */
    public static ResponseFormat of(Object value, ResponseFormat fallback) {
        if (value == null) {
            return fallback;
        }
        if (value instanceof String s && CHOICES.contains(s)) {
            return valueOf(s.toUpperCase(Locale.ROOT));
        }
        throw RlmException.invalid(
                ARGUMENT,
                ARGUMENT + " is " + (value instanceof String s ? "'" + s + "'" : Args.jsonType(value))
                        + ", which is not a known format",
                "pass response_format as \"text\", \"json\", \"markdown\" or \"toon\"");
    }

    public String wireName() {
        return name().toLowerCase(Locale.ROOT);
    }
}
