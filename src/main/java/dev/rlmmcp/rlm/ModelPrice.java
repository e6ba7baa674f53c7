package dev.rlmmcp.rlm;

/** What a model costs, in USD per million input and per million output tokens. */
public record ModelPrice(double inputPerMillion, double outputPerMillion) {

    public ModelPrice {
        if (inputPerMillion < 0 || outputPerMillion < 0) {
            throw new IllegalArgumentException("prices cannot be negative");
        }
    }

    public double cost(long inputTokens, long outputTokens) {
        return (inputTokens * inputPerMillion + outputTokens * outputPerMillion) / 1_000_000.0;
    }
}
