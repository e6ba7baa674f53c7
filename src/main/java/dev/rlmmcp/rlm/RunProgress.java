package dev.rlmmcp.rlm;

/** Told as a run goes: after each model turn of any RLM in the tree, and as children start and end. */
@FunctionalInterface
public interface RunProgress {

    RunProgress NONE = (figures, iteration, depth) -> {};

    /** {@code iteration} and {@code depth} are those of the RLM that just moved. */
    void report(RunFigures figures, int iteration, int depth);
}
