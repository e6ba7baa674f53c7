package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Path;

/** A launcher that does what another does, except where a subclass says otherwise (most often {@link #start}). */
public abstract class DelegatingLauncher implements KernelLauncher {

    protected final KernelLauncher inner;

    protected DelegatingLauncher(KernelLauncher inner) {
        this.inner = inner;
    }

    @Override
    public String name() {
        return inner.name();
    }

    @Override
    public Process start(KernelSpec spec) throws IOException {
        return inner.start(spec);
    }

    @Override
    public Path writableDirInside(Path hostDir) {
        return inner.writableDirInside(hostDir);
    }

    @Override
    public void attach(Process process, Path hostDir) throws IOException {
        inner.attach(process, hostDir);
    }

    @Override
    public boolean isolatesUser() {
        return inner.isolatesUser();
    }

    @Override
    public void interrupt(Process process) {
        inner.interrupt(process);
    }

    @Override
    public void kill(Process process) {
        inner.kill(process);
    }

    @Override
    public String whyEnded(Process process) {
        return inner.whyEnded(process);
    }
}
