package dev.rlmmcp.kernel.channel;

/** How deeply the current thread is nested in kernel callbacks (0 outside any), for depth limits. */
public final class CallbackDepth {

    private CallbackDepth() {}

    public static int current() {
        return CallbackScope.depth();
    }
}
