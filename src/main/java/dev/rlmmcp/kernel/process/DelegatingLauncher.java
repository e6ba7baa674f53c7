package dev.rlmmcp.kernel.process;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A launcher that does what another does, except where a subclass says otherwise (most often {@link #start}):
 * the kernels it starts keep the handles the inner launcher gave them.
 */
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
    public KernelHandle start(KernelSpec spec) throws IOException {
        return inner.start(spec);
    }

    @Override
    public Path writableDirInside(Path hostDir) {
        return inner.writableDirInside(hostDir);
    }

    @Override
    public boolean isolatesUser() {
        return inner.isolatesUser();
    }
}
