package dev.rlmmcp.rlm;

import java.util.Map;

/**
 * The server's configuration of RLM runs: the limits a run gets when its caller names none, the
 * price of each model (for the cost budget; a model without a price costs nothing known), and each
 * model's context window in tokens (for compaction; {@code defaultWindow} for models not listed).
 */
public record RlmConfig(
        RunLimits defaults, Map<String, ModelPrice> prices, Map<String, Integer> windows, int defaultWindow) {

    public static final RlmConfig DEFAULTS = new RlmConfig(RunLimits.DEFAULTS, Map.of(), Map.of(), 128_000);

    public RlmConfig {
        prices = Map.copyOf(prices);
        windows = Map.copyOf(windows);
        if (defaultWindow < 1_000) {
            throw new IllegalArgumentException("a context window is at least 1000 tokens");
        }
    }

    public int window(String model) {
        return model == null ? defaultWindow : windows.getOrDefault(model, defaultWindow);
    }

    /** The price of {@code model}, or null if none is configured. */
    public ModelPrice price(String model) {
        return model == null ? null : prices.get(model);
    }
}
