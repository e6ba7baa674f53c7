package dev.rlmmcp.kernel.protocol;

import com.fasterxml.jackson.annotation.JsonIgnoreProperties;

/**
 * What the {@code answer} dict held after a cell of an RLM's loop: its content as text, and whether the
 * code marked it ready ({@code answer["ready"] = True}, FINAL or FINAL_VAR).
 */
@JsonIgnoreProperties(ignoreUnknown = true)
public record LoopAnswer(String content, boolean ready) {

    public LoopAnswer {
        content = content == null ? "" : content;
    }
}
