package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Path;

/**
 * Cuts a snapshot directory that a kernel filled past its disk limit back to its snapshot, before
 * another kernel runs there. What a snapshot holds is the snapshot store's to say (cli wires in
 * {@code store.SnapshotPrune}); the launcher only knows when it is needed.
 */
@FunctionalInterface
public interface SnapshotCutBack {

    /** Returns the bytes the directory holds after. Called only while no kernel can write {@code dir}. */
    long cutBack(Path dir, long limit) throws IOException;
}
