package dev.rlmmcp.cli;

import dev.rlmmcp.kernel.process.ContainerLauncher;
import dev.rlmmcp.kernel.process.ContainerLauncher.ContainerSettings;
import dev.rlmmcp.kernel.process.KernelLauncher;
import java.util.Optional;

/** Kernels in containers, as --sandbox, --container-image and --container-runtime ask for them. */
final class ContainerKernels {

    private ContainerKernels() {}

    /**
     * A container launcher if a runtime with a working engine is here; {@code auto} considers one
     * only when an image is configured, {@code container} falls back to the default image. A
     * container's memory leaves room for the interpreter above a session's variables.
     */
    static Optional<KernelLauncher> launcher(String sandbox, String image, String runtime, long maxMemoryMb) {
        if (image == null && "auto".equals(sandbox)) {
            return Optional.empty();
        }
        ContainerSettings defaults = ContainerSettings.defaults();
        ContainerSettings settings = new ContainerSettings(
                image == null ? defaults.image() : image,
                defaults.python(),
                (int) Math.max(defaults.memoryMb(), maxMemoryMb + 512),
                defaults.cpus(),
                defaults.pidsLimit(),
                defaults.tmpMb());
        return ContainerLauncher.detect(runtime, settings).map(launcher -> launcher);
    }
}
