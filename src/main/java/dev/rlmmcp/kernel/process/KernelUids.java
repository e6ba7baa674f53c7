package dev.rlmmcp.kernel.process;

import java.util.BitSet;

/**
 * A range of uids handed out one per running kernel and taken back when it ends, so that per-uid
 * limits (RLIMIT_NPROC) count each kernel's processes alone. The next uid handed out is the one after
 * the last, round the range, so a uid just given back is the last to be reused.
 */
public final class KernelUids {

    private final int first;
    private final int count;
    private final BitSet taken;
    private int next;

    public KernelUids(int first, int count) {
        if (first <= 0 || count < 1 || (long) first + count - 1 > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("invalid kernel uid range " + first + "+" + count);
        }
        this.first = first;
        this.count = count;
        this.taken = new BitSet(count);
    }

    /** A free uid, or -1 if every uid of the range is running a kernel. */
    public synchronized int take() {
        int free = taken.nextClearBit(next);
        if (free >= count) {
            free = taken.nextClearBit(0);
            if (free >= count) {
                return -1;
            }
        }
        taken.set(free);
        next = (free + 1) % count;
        return first + free;
    }

    public synchronized void give(int uid) {
        if (uid >= first && uid - first < count) {
            taken.clear(uid - first);
        }
    }

    public synchronized int inUse() {
        return taken.cardinality();
    }

    public int first() {
        return first;
    }

    public int count() {
        return count;
    }
}
