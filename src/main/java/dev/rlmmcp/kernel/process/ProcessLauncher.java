package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A plain child process with a scrubbed environment: no isolation beyond the process boundary. It
 * runs in a session of its own and is SIGKILLed when the server ends (setpriv's parent-death signal).
 */
public final class ProcessLauncher implements KernelLauncher {

    private static final Path SETPRIV = Path.of("/usr/bin/setpriv");

    @Override
    public String name() {
        return "process";
    }

    @Override
    public KernelHandle start(KernelSpec spec) throws IOException {
        List<String> command = new ArrayList<>();
        if (Files.isExecutable(SETPRIV)) {
            command.addAll(List.of(SETPRIV.toString(), "--pdeathsig", "KILL", "--"));
        }
        command.addAll(spec.pythonCommand());
        ProcessBuilder builder = new ProcessBuilder(KernelLauncher.inOwnSession(command))
                .directory(spec.workDir().toFile());
        Map<String, String> env = builder.environment();
        env.clear();
        env.put("PATH", "/usr/local/bin:/usr/bin:/bin");
        env.put("LANG", "C.UTF-8");
        env.put("LC_ALL", "C.UTF-8");
        env.put("HOME", spec.workDir().toString());
        return new KernelHandle(builder.start());
    }
}
