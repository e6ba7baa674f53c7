package dev.rlmmcp.llm;

import java.net.URI;

/** Where an OpenAI-compatible chat completions API is: base URL (…/v1), key (may be null), default model. */
public record OpenAiConfig(URI baseUrl, String apiKey, String model) {

    /** Never shows the key. */
    @Override
    public String toString() {
        return "OpenAiConfig[baseUrl=" + baseUrl + ", apiKey=" + (apiKey == null ? "none" : "***") + ", model=" + model
                + "]";
    }
}
