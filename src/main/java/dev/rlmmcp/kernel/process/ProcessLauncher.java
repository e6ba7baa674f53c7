package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.util.Map;

/** A plain child process with a scrubbed environment: no isolation beyond the process boundary. */
public final class ProcessLauncher implements KernelLauncher {

    @Override
    public String name() {
        return "process";
    }

    @Override
    public Process start(KernelSpec spec) throws IOException {
        ProcessBuilder builder = new ProcessBuilder(spec.pythonCommand()).directory(spec.workDir().toFile());
        Map<String, String> env = builder.environment();
        env.clear();
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("LANG", "C.UTF-8");
        env.put("LC_ALL", "C.UTF-8");
        env.put("HOME", spec.workDir().toString());
        return builder.start();
    }
}
