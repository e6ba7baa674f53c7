package dev.rlmmcp.core;

import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.rlmmcp.kernel.Settings;
import dev.rlmmcp.tools.Replies;
import java.nio.file.Path;

/** The JSON replies the agent sees for a session's records, built as the tools build them. */
public final class TestReplies {

    private static final KernelSettings DEFAULT =
            WireRecords.settings(TestSettings.in(Path.of(System.getProperty("java.io.tmpdir"))));

    private TestReplies() {}

    public static ObjectNode step(StepResult result) {
        return Replies.step(result, DEFAULT);
    }

    public static ObjectNode step(StepResult result, Settings settings) {
        return Replies.step(result, WireRecords.settings(settings));
    }

    public static ObjectNode load(LoadResult result) {
        return Replies.load(result, DEFAULT);
    }

    public static ObjectNode load(LoadResult result, Settings settings) {
        return Replies.load(result, WireRecords.settings(settings));
    }

    public static ObjectNode answer(KernelAnswer<?> answer) {
        return Replies.answer(answer);
    }

    public static ObjectNode trace(TraceView trace) {
        return Replies.trace(trace);
    }

    public static ObjectNode summary(SessionSummary summary) {
        return Replies.summary(summary);
    }

    public static ObjectNode finalized(Finalized finalized) {
        return Replies.finalized(finalized);
    }

    public static ObjectNode variables(VariablesView view) {
        return Replies.variables(view);
    }
}
