package dev.rlmmcp.e2e.cluster;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Busy processes, one per core, at the nodes' own priority: a machine other work keeps loaded. */
final class CpuLoad implements AutoCloseable {

    private final List<Process> spinners = new ArrayList<>();

    private CpuLoad() {}

    static CpuLoad onEveryCore() throws IOException {
        CpuLoad load = new CpuLoad();
        for (int i = 0; i < Runtime.getRuntime().availableProcessors(); i++) {
            load.spinners.add(new ProcessBuilder("sh", "-c", "while :; do :; done")
                    .redirectErrorStream(true)
                    .start());
        }
        return load;
    }

    @Override
    public void close() {
        spinners.forEach(Process::destroyForcibly);
    }
}
