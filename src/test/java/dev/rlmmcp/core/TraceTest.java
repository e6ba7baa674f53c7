package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import dev.rlmmcp.store.StoreException;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TraceTest {

    @Test
    void keepsTheLastEntriesAndSaysHowManyWereDropped() {
        Trace trace = new Trace();
        for (int i = 0; i < Trace.KEPT + 3; i++) {
            trace.append(i, "exec", "x = " + i, "ok", "out " + i, List.of(), 1.0, 5, null, 0, null, null, null);
        }

        TraceView view = trace.view(null, 0, 5, null);

        assertThat(trace.length()).isEqualTo(Trace.KEPT + 3);
        assertThat(view.traceLength()).isEqualTo(Trace.KEPT + 3);
        assertThat(view.traceDropped()).isEqualTo(3);
        assertThat(view.start()).isEqualTo(3);
        assertThat(view.end()).isEqualTo(5);
        assertThat(view.steps()).hasSize(2);
        assertThat(view.steps().get(0)).containsEntry("index", 3).containsEntry("output", "out 3");
    }

    @Test
    void aLoadEntryNamesTheVariableItMadeAndARestoredTraceGoesOnFromItsLength() {
        Trace trace = new Trace();
        trace.restore(List::of, 7);

        // a load's status and output are the session's to write now (SessionTest checks them)
        Step entry = trace.append(
                null,
                "load",
                "rlm_load_data doc (text)",
                "done",
                "str, 1 KB",
                List.of("doc"),
                2.0,
                1024,
                null,
                4096,
                null,
                null,
                null);

        assertThat(entry.index()).isEqualTo(7);
        assertThat(trace.length()).isEqualTo(8);
        assertThat(trace.variableNames()).containsExactly("doc");
    }

    @Test
    void aRestoredTraceIsReadFromTheStoreOnceWhenFirstUsed() {
        AtomicInteger reads = new AtomicInteger();
        Trace trace = new Trace();
        trace.restore(
                () -> {
                    reads.incrementAndGet();
                    return List.of(stored(5, "a"), stored(6, "b"));
                },
                7);

        assertThat(trace.length()).isEqualTo(7);
        assertThat(reads).hasValue(0);

        Step next = trace.append(7, "exec", "c = 3", "ok", "", List.of("c"), 1.0, 5, null, 0, null, null, null);
        TraceView view = trace.view(null, 0, 100, null);

        assertThat(reads).hasValue(1);
        assertThat(next.index()).isEqualTo(7);
        assertThat(view.start()).isEqualTo(5);
        assertThat(view.steps()).extracting(step -> step.get("index")).containsExactly(5, 6, 7);
        assertThat(trace.variableNames()).containsExactly("a", "b", "c");
        assertThat(reads).hasValue(1);
    }

    @Test
    void aTraceTheStoreCannotGiveBackCostsItsOldEntriesOnly() {
        Trace trace = new Trace();
        trace.restore(
                () -> {
                    throw new StoreException("disk I/O error", null);
                },
                4);

        Step next = trace.append(4, "exec", "x = 1", "ok", "", List.of("x"), 1.0, 5, null, 0, null, null, null);

        assertThat(next.index()).isEqualTo(4);
        assertThat(trace.length()).isEqualTo(5);
        assertThat(trace.view(null, 0, 100, null).steps())
                .extracting(step -> step.get("index"))
                .containsExactly(4);
    }

    private static Step stored(int index, String variable) {
        return new Step(
                index,
                index,
                "exec",
                Instant.EPOCH,
                variable + " = 1",
                "ok",
                "",
                List.of(variable),
                1.0,
                5,
                null,
                0,
                null,
                null,
                null);
    }
}
