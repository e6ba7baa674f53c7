package dev.rlmmcp.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Delayed;
import java.util.concurrent.FutureTask;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * When a snapshot is scheduled: what a kernel left unwritten after its reply, at once; never pushed
 * back by later steps.
 */
class SnapshotsTest {

    private static final Duration WAIT = Duration.ofMillis(1000);

    private final ManualTimer timer = new ManualTimer();
    private final Semaphore taken = new Semaphore(0);
    private final Snapshots snapshots = new Snapshots("s-test", null, WAIT, timer, taken::release, at -> {});

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    /** What a kernel's reply to a step lists as the variables no snapshot holds yet. */
    private static List<String> step(String... unsaved) {
        return List.of(unsaved);
    }

    @Test
    void aChangeLeftUnwrittenIsSnapshottedAtOnce() {
        assertThat(snapshots.noteUnsaved(step("a"))).isTrue();
        assertThat(snapshots.pending()).isTrue();
        assertThat(timer.delays).containsExactly(0L);
    }

    @Test
    void stepsThatComeMeanwhileDoNotPostponeIt() {
        snapshots.noteUnsaved(step("a"));
        for (int i = 0; i < 40; i++) {
            // a step every half second that changes nothing: the kernel still lists a as unsaved
            snapshots.noteUnsaved(step("a"));
            snapshots.noteUnsaved(step("a", "b"));
        }
        assertThat(timer.delays).containsExactly(0L);
        assertThat(timer.scheduled.getFirst().isCancelled()).isFalse();
    }

    @Test
    void onceTakenTheNextChangeSchedulesTheNextOne() throws Exception {
        snapshots.noteUnsaved(step("a"));
        timer.scheduled.getFirst().run();
        assertThat(taken.tryAcquire(10, TimeUnit.SECONDS))
                .as("the session was asked to snapshot")
                .isTrue();
        snapshots.noteUnsaved(step("a"));
        assertThat(timer.delays).containsExactly(0L, 0L);
    }

    @Test
    void repliesThatListNothingUnsavedScheduleNothing() {
        assertThat(snapshots.noteUnsaved(null)).isFalse();
        assertThat(snapshots.noteUnsaved(step())).isTrue();
        assertThat(snapshots.pending()).isFalse();
        assertThat(timer.delays).isEmpty();
    }

    @Test
    void aCancelledSnapshotIsScheduledAgainByTheNextChange() {
        snapshots.noteUnsaved(step("a"));
        snapshots.cancel();
        snapshots.noteUnsaved(step("a"));
        assertThat(timer.delays).hasSize(2);
    }

    @Test
    void whatIsUnsavedIsNamedWithWhy() {
        snapshots.noteUnsaved(step("a", "b"));
        assertThat(snapshots.unsavedNow("changed")).containsOnlyKeys("a", "b").containsValue("changed");
        assertThat(snapshots.lost()).containsExactly("a", "b");
        assertThat(snapshots.pending()).isFalse();
    }

    /** Records what is scheduled and runs nothing by itself; a test runs a task when it likes. */
    private static final class ManualTimer extends ScheduledThreadPoolExecutor {

        final List<Long> delays = new CopyOnWriteArrayList<>();
        final List<Task> scheduled = new CopyOnWriteArrayList<>();

        ManualTimer() {
            super(1);
        }

        @Override
        public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
            delays.add(unit.toMillis(delay));
            Task task = new Task(command, unit.toMillis(delay));
            scheduled.add(task);
            return task;
        }
    }

    private static final class Task extends FutureTask<Void> implements ScheduledFuture<Void> {

        private final long delayMs;

        Task(Runnable command, long delayMs) {
            super(command, null);
            this.delayMs = delayMs;
        }

        @Override
        public long getDelay(TimeUnit unit) {
            return unit.convert(delayMs, TimeUnit.MILLISECONDS);
        }

        @Override
        public int compareTo(Delayed other) {
            return Long.compare(getDelay(TimeUnit.MILLISECONDS), other.getDelay(TimeUnit.MILLISECONDS));
        }
    }
}
